"""Write the dev overlay's gitignored secrets/*.env, which its secretGenerator turns into the four
Secrets (names and keys: base/secret.template.yaml).

    DPS_DEV_API_DATABASE_URL=postgresql://dps_api:...@10.20.0.10:5432/dps_api \
    DPS_DEV_WEBHOOKS_DATABASE_URL=... DPS_DEV_BILLING_DATABASE_URL=... DPS_DEV_CONSOLE_DATABASE_URL=... \
    DPS_DEV_AMQP_URL=amqp://...@10.20.0.20:5672/dps DPS_DEV_REDIS_URL=redis://:...@10.20.0.30:6379/0 \
    DPS_DEV_SMTP_URL=smtp://10.20.0.40:587 \
    make k8s-dev-secrets

The data stores' and the mail catcher's URLs (with their passwords) come from the environment and are
required: nothing guesses a password. Every application secret is generated fresh. Existing files are kept (delete
them to rotate; WEBHOOK_SECRET_KEY and BILLING_TOKEN_KEY unseal stored data: rotate those with care).
Standard library only.
"""

from __future__ import annotations

import argparse
import base64
import os
import secrets
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
STORES = ("API_DATABASE_URL", "WEBHOOKS_DATABASE_URL", "BILLING_DATABASE_URL", "CONSOLE_DATABASE_URL", "AMQP_URL",
          "REDIS_URL", "SMTP_URL")


def _token() -> str:
    return secrets.token_urlsafe(36)


def _aes_key() -> str:
    return base64.b64encode(secrets.token_bytes(32)).decode()


def files(urls: dict[str, str]) -> dict[str, dict[str, str]]:
    internal = _token()  # the same in the three: the api checks the others' bearer token
    console = _token()  # the same in the api's and the console's: the console's bearer on /internal/v1/console
    common = {"AMQP_URL": urls["AMQP_URL"], "REDIS_URL": urls["REDIS_URL"], "INTERNAL_API_TOKEN": internal}
    return {
        "api.env": {"DATABASE_URL": urls["API_DATABASE_URL"], **common,
                    "API_KEY_PEPPER": _token(), "CURSOR_SECRET": _token(), "CONSOLE_API_TOKEN": console},
        "webhook-dispatcher.env": {"DATABASE_URL": urls["WEBHOOKS_DATABASE_URL"], **common,
                                   "CURSOR_SECRET": _token(), "WEBHOOK_SECRET_KEY": _aes_key()},
        "billing-connector.env": {
            "DATABASE_URL": urls["BILLING_DATABASE_URL"], **common, "CURSOR_SECRET": _token(),
            # the stand-in accepts whatever it is started with (the same Secret)
            "BILLING_SECRET_KEY": "sk_test_" + secrets.token_hex(24), "BILLING_CLIENT_ID": "ca_" + secrets.token_hex(16),
            "BILLING_WEBHOOK_SECRET": "whsec_" + secrets.token_hex(24),
            "BILLING_TOKEN_KEY": _aes_key(), "BILLING_STATE_SECRET": _token(),
        },
        "console.env": {"DATABASE_URL": urls["CONSOLE_DATABASE_URL"], "CONSOLE_API_TOKEN": console,
                        "CONSOLE_SECRET_KEY": _aes_key(), "SMTP_URL": urls["SMTP_URL"]},
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--output", type=Path, default=HERE / "secrets")
    args = parser.parse_args(argv)
    missing = [f"DPS_DEV_{name}" for name in STORES if not os.environ.get(f"DPS_DEV_{name}")]
    if missing:
        print("make_secrets: set " + ", ".join(missing) + " (the dev data stores' URLs, with their passwords)",
              file=sys.stderr)
        return 2
    args.output.mkdir(exist_ok=True)
    for name, values in files({name: os.environ[f"DPS_DEV_{name}"] for name in STORES}).items():
        path = args.output / name
        if path.exists():
            print(f"{path} exists; kept")
            continue
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as out:
            out.write("".join(f"{key}={value}\n" for key, value in values.items()))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
