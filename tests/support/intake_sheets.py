"""Bench sheets as a tester uploads them to the intake, shared by the intake's tests and the
pipeline's: a pending slot of the demo, a good row for it, a sheet of rows, and the upload."""

from __future__ import annotations

from intake.cli import multipart_body
from tests.support.harness import Server

HEADER = "product,protocol,sample,reading,unit,tester,date,notes\n"
SLOT = ("loop-larder-cafeti-re-800-ml", "brew-temperature-drop")  # pending in the demo; unit °C, 0-40
TESTER = "Eleni Papadaki"


def sheet(*rows: str) -> bytes:
    return (HEADER + "".join(f"{row}\n" for row in rows)).encode()


def good_row(sample: int = 1, reading: str = "11.5", unit: str = "°C", date: str = "2026-11-20") -> str:
    return f"{SLOT[0]},{SLOT[1]},{sample},{reading},{unit},{TESTER},{date},"


def upload(server: Server, content: bytes, token: str | None, name: str = "session.csv"):
    body, content_type = multipart_body(name, content)
    headers = {"Content-Type": content_type}
    if token is not None:
        headers["Authorization"] = f"Bearer {token}"
    return server.send("POST", "/api/intake/bench-sheets", body, headers)
