#!/usr/bin/python3
"""The team's backend deciding on a device-integrity verdict, as Examples/Integrity/walk.sh left it in FOLDER:

    Examples/Integrity/check.py FOLDER [LABEL]

prints the labels, Secure Boot, and each failed check's code and detail, then `accepted` (exit 0) when the verdict has
LABEL (MEETS_DEVICE_INTEGRITY by default; a backend that serves virtual machines also takes MEETS_VIRTUAL_INTEGRITY),
`refused` (exit 1) otherwise. The backend reads only the verdict: nothing of the TPM or the boot reached it."""
import json
import pathlib
import sys

folder = pathlib.Path(sys.argv[1])
wanted = sys.argv[2] if len(sys.argv) > 2 else "MEETS_DEVICE_INTEGRITY"
verdict = json.loads((folder / "verdict.json").read_text())
print("labels:", " ".join(verdict["labels"]) or "none")
print("secure boot:", {True: "on", False: "off"}.get(verdict.get("secure_boot"), "unknown"))
for reason in verdict["reasons"]:
    print("failed:", reason["code"] + (f" ({reason['detail']})" if reason.get("detail") else ""))
accepted = wanted in verdict["labels"]
print("accepted" if accepted else "refused", f"(needs {wanted})")
sys.exit(0 if accepted else 1)
