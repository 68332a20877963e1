"""`dps-billing-stand-in`: the stand-in as a process, for `make run`. Prints its URLs, runs until
interrupted."""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from types import FrameType

from .server import BillingStandIn


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="dps-billing-stand-in", description="A test double of the billing platform (Stripe)."
    )
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8090)
    parser.add_argument("--secret-key", default="sk_test_dps_billing_stand_in", help="the app's secret key")
    parser.add_argument("--client-id", default="ca_dps_billing_stand_in", help="the app's client id")
    parser.add_argument(
        "--redirect-uri", action="append", default=[], help="a registered OAuth redirect URI (repeatable)"
    )
    parser.add_argument("--webhook-url", default=None, help="where to send the platform's signed webhooks")
    parser.add_argument("--webhook-secret", default="whsec_dps_billing_stand_in")
    parser.add_argument("--app-name", default="Deal Pricing Service")
    parser.add_argument("--latency-ms", type=float, default=0.0, help="delay of each /v1/ call")
    parser.add_argument("--rate-limit-fraction", type=float, default=None, help="answer 429 to this share of /v1/")
    parser.add_argument("--rate-limit-per-second", type=int, default=None,
                        help="answer 429 to an account's /v1/ call when this many came in the second before it")
    parser.add_argument("--error-fraction", type=float, default=None, help="answer 500 to this share of /v1/")
    parser.add_argument("--drop-fraction", type=float, default=None, help="drop this share of /v1/ connections")
    parser.add_argument("--seed", type=int, default=None, help="seed of the fault fractions")
    parser.add_argument("--quiet", action="store_true", help="do not log each request")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        stand_in = BillingStandIn.start(
            secret_key=args.secret_key,
            client_id=args.client_id,
            redirect_uris=args.redirect_uri,
            webhook_url=args.webhook_url,
            webhook_secret=args.webhook_secret,
            host=args.host,
            port=args.port,
            app_name=args.app_name,
            seed=args.seed,
            log_requests=not args.quiet,
            rate_limit_per_second=args.rate_limit_per_second,
        )
    except (ValueError, OSError) as exc:
        print(f"dps-billing-stand-in: {exc}", file=sys.stderr)
        return 2
    if args.latency_ms:
        stand_in.faults.latency(args.latency_ms / 1000, path_prefix="/v1/")
    if args.rate_limit_fraction:
        stand_in.faults.add("/v1/", 429, fraction=args.rate_limit_fraction, retry_after=1, should_retry=True)
    if args.error_fraction:
        stand_in.faults.add("/v1/", 500, fraction=args.error_fraction)
    if args.drop_fraction:
        stand_in.faults.drop(None, path_prefix="/v1/", fraction=args.drop_fraction)
    print("Billing platform stand-in (a test double of Stripe) is up:")
    for name, url in stand_in.urls().items():
        print(f"  {name:<24} {url}")
    print(f"  {'Control page':<24} {stand_in.dashboard_url}/")
    print(f"  {'Webhooks to':<24} {args.webhook_url or '(none)'}", flush=True)
    stopping = threading.Event()

    def _stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    stopping.wait()
    stand_in.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
