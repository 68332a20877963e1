"""The currencies Stripe accepts for prices, and their minor-unit rules."""

from __future__ import annotations

# Stripe's supported presentment currencies (lowercase ISO 4217), as its currency documentation lists them.
SUPPORTED = frozenset(
    """
    usd aed afn all amd ang aoa ars aud awg azn bam bbd bdt bgn bhd bif bmd bnd bob brl bsd bwp byn bzd cad cdf
    chf clp cny cop crc cve czk djf dkk dop dzd egp etb eur fjd fkp gbp gel ghs gip gmd gnf gtq gyd hkd hnl htg
    huf idr ils inr isk jmd jod jpy kes kgs khr kmf krw kwd kyd kzt lak lbp lkr lrd lsl mad mdl mga mkd mmk mnt
    mop mur mvr mwk mxn myr mzn nad ngn nio nok npr nzd omr pab pen pgk php pkr pln pyg qar ron rsd rub rwf sar
    sbd scr sek sgd shp sle sos srd std szl thb tjs tnd top try ttd twd tzs uah ugx uyu uzs vnd vuv wst xaf xcd
    xof xpf yer zar zmw
    """.split()
)

# Three-decimal currencies: amounts in thousandths whose last digit must be 0.
THREE_DECIMAL = frozenset({"bhd", "jod", "kwd", "omr", "tnd"})
