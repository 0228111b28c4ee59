#!/usr/bin/env python3
"""CI smoke check of the README's main command: the server it starts hosts a game of every ruleset.

Usage: smoke-server.py LOG. LOG is where the server's stdout goes; its first line says where it listens.
Plays each ruleset's example script (plugins/<id>/examples/*.jsonl, with its .setup.json) through the
HTTP API, one token per seat, then checks the lobby, a spectator's view and the metrics. Standard library
only, so a fresh machine needs nothing more than Python 3.
"""
import json
import pathlib
import re
import sys
import time
import urllib.error
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent


def wait_for_address(log: pathlib.Path, timeout: float = 2400.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if log.exists():
            match = re.search(r"listening on (http://\S+)", log.read_text(errors="replace"))
            if match:
                return match.group(1)
        time.sleep(0.5)
    sys.exit(f"smoke: the server did not start within {timeout:.0f} s; its log:\n{log.read_text(errors='replace')}")


def call(method: str, url: str, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method=method)
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def main() -> None:
    base = wait_for_address(pathlib.Path(sys.argv[1]))
    status, body = call("GET", f"{base}/healthz")
    assert status == 200, (status, body)
    rulesets = {r["description"]["id"]: r for r in json.loads(call("GET", f"{base}/api/rulesets")[1])}
    assert rulesets, "no ruleset is loaded"
    played = 0
    for script in sorted(ROOT.glob("plugins/*/examples/*.jsonl")):
        ruleset = script.parent.parent.name
        if ruleset not in rulesets:
            sys.exit(f"smoke: ruleset {ruleset} of {script.relative_to(ROOT)} is not loaded")
        steps = [json.loads(line) for line in script.read_text().splitlines() if line.strip()]
        description = rulesets[ruleset]["description"]
        setup = {"players": max(s["player"] for s in steps) + 1, "seed": 0, "config": {}}
        sidecar = script.with_suffix(".setup.json")
        if sidecar.exists():
            setup.update(json.loads(sidecar.read_text()))
        setup["players"] = max(setup["players"], description["min_players"])
        status, body = call("POST", f"{base}/api/games", {"ruleset": ruleset, **setup})
        assert status == 201, (script.name, status, body)
        created = json.loads(body)
        game, tokens = created["game"], created["tokens"]
        for seq, step in enumerate(steps):
            for _ in range(400):
                status, body = call(
                    "POST",
                    f"{base}/api/games/{game}/actions",
                    {"action": step["action"], "expected_seq": seq},
                    tokens[step["player"]],
                )
                # A well-behaved client waits when a seat acts faster than the server's rate limit.
                if status != 429:
                    break
                time.sleep(0.05)
            assert status == 200, (script.name, seq + 1, status, body)
            assert json.loads(body)["seq"] == seq + 1, body
        status, body = call("GET", f"{base}/api/games/{game}/view")
        assert status == 200, (status, body)
        view = json.loads(body)
        assert view["seq"] == len(steps) and view["seat"] is None, view
        played += len(steps)
        print(f"smoke: {created['ruleset']}: {len(steps)} actions of {script.name} acknowledged; "
              f"spectator sees outcome {json.dumps(view['view']['table']['outcome'])}")
    status, body = call("GET", f"{base}/metrics")
    assert status == 200 and f"coffer_actions_total {played}" in body, body
    status, body = call("GET", f"{base}/api/games")
    assert status == 200 and len(json.loads(body)) >= 3, body
    print(f"smoke: {played} actions acknowledged by {base}")


if __name__ == "__main__":
    main()
