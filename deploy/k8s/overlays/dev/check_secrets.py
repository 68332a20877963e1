"""Check the dev overlay's gitignored secrets/*.env before kustomize reads them, and say what to run.

    python3 deploy/k8s/overlays/dev/check_secrets.py && kubectl apply -k deploy/k8s/overlays/dev

Without the files kustomize fails with "evalsymlink failure on .../secrets/api.env", which does not say
that `make k8s-dev-secrets` makes them; and a file made before a key was added to a Secret renders
fine and fails only when the pod starts. This checks that each file exists and has every key of its
Secret in base/secret.template.yaml. Exit status 2 with the reason on stderr, 0 when complete.
Standard library only (the template is read line by line: names and stringData keys).
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE.parent.parent / "base" / "secret.template.yaml"
# secrets/<file> -> the Secret kustomize's secretGenerator makes of it (kustomization.yaml)
FILES = {"api.env": "dps-api", "webhook-dispatcher.env": "dps-webhook-dispatcher",
         "billing-connector.env": "dps-billing-connector", "console.env": "dps-console"}
HOW = ("run `make k8s-dev-secrets` first, with the dev data stores' URLs in DPS_DEV_*_URL "
       "(deploy/README.md, \"Kubernetes\")")


def template_keys(template: Path = TEMPLATE) -> dict[str, list[str]]:
    """Each Secret's keys in the template: {name: [key, ...]}."""
    keys: dict[str, list[str]] = {}
    name, in_data = "", False
    for line in template.read_text().splitlines():
        if line.startswith("---"):
            name, in_data = "", False
        elif line.startswith("  name: "):
            name = line.split(":", 1)[1].strip()
        elif line.startswith("stringData:"):
            in_data = True
            keys[name] = []
        elif in_data and line.startswith("  ") and ":" in line and not line.lstrip().startswith("#"):
            keys[name].append(line.split(":", 1)[0].strip())
        elif line and not line.startswith(" "):
            in_data = False
    return keys


def problems(secrets: Path = HERE / "secrets") -> list[str]:
    expected = template_keys()
    found = []
    for filename, secret in FILES.items():
        path = secrets / filename
        if not path.is_file():
            found.append(f"{path} is missing")
            continue
        present = {line.split("=", 1)[0].strip() for line in path.read_text().splitlines()
                   if "=" in line and not line.lstrip().startswith("#") and line.split("=", 1)[1].strip()}
        missing = [key for key in expected[secret] if key not in present]
        if missing:
            found.append(f"{path} has no value for {', '.join(missing)} (Secret {secret})")
    return found


def main() -> int:
    found = problems()
    if not found:
        return 0
    for problem in found:
        print(f"check_secrets: {problem}", file=sys.stderr)
    print(f"check_secrets: the dev overlay's Secrets are incomplete: {HOW}. Existing files are kept: "
          "delete an incomplete one to have it made again.", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
