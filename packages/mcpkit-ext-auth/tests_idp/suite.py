"""The official conformance suite's authorization-server scenarios (0.2.0-alpha.12
``authorization``: metadata endpoint; authorization code grant with PKCE, ``resource`` and
RFC 9207 ``iss``) against any authorization server a test serves, with the
:class:`HeadlessBrowser` as the suite's browser (the code path of the
``conformance-auth-server`` session: ``conformance/harness.py`` ``run_authorization_suite``).

Rules:
1. The suite's client is registered by the authorization server's own dynamic registration
   (RFC 7591: a public client, ``none``), with the suite's loopback callback as its one
   redirect URI; the suite then runs with that ``client_id``.
2. The callback port is named to the suite before it listens: a run whose port was taken
   is run again on a fresh one (``harness`` rule 3), five times at most.
3. The verdict is read from the suite's ``checks.json`` files; a run passes with exit 0,
   both scenarios present, and no FAILURE, WARNING or SKIPPED check.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import anyio
import anyio.from_thread
import anyio.to_thread
import httpx2
from idp import JSON, HeadlessBrowser, Tls, harness, toolchain

SUITE = "conformance@0.2.0-alpha.12"
SCENARIOS = ("authorization-server-metadata-endpoint", "authorization-code-grant")


@dataclass
class SuiteRun:
    status: int
    counts: dict[str, int]
    scenarios: list[str]
    log: Path

    @property
    def problems(self) -> list[str]:
        """Rule 3: why the run does not pass (empty when it does)."""
        found = [s for s in SCENARIOS if not any(s in name for name in self.scenarios)]
        bad = {k: self.counts.get(k, 0) for k in ("FAILURE", "WARNING", "SKIPPED")}
        problems = [f"exit status {self.status}"] if self.status else []
        problems += [f"missing scenario {s}" for s in found]
        problems += [f"{n} {k}" for k, n in bad.items() if n]
        if problems:
            problems.append(f"see {self.log}")
        return problems


async def run_suite(
    issuer: str, resource: str, browser: HeadlessBrowser, out: Path, tls: Tls | None = None
) -> SuiteRun:
    """Rules 1-3 against the authorization server ``issuer`` (its RFC 8414 metadata),
    asking for tokens for ``resource``; logs and verdicts under ``out``."""
    http = tls.http() if tls is not None else httpx2.AsyncClient(timeout=30)
    async with http as client:
        metadata: JSON = (
            await client.get(f"{issuer}/.well-known/oauth-authorization-server")
        ).json()
        status, log, results = 0, out / "authorization.txt", out / "authorization"
        for _ in range(5):
            shutil.rmtree(results, ignore_errors=True)  # a retried run's verdicts only
            (port,) = harness.free_ports(1)
            callback = f"http://127.0.0.1:{port}/callback"
            registered = await client.post(
                metadata["registration_endpoint"],
                json={
                    "client_name": "conformance suite",
                    "redirect_uris": [callback],
                    "grant_types": ["authorization_code", "refresh_token"],
                    "response_types": ["code"],
                    "token_endpoint_auth_method": "none",
                },
            )
            assert registered.status_code == 201, registered.text
            client_id = registered.json()["client_id"]
            argv = [*toolchain.tool_argv(SUITE), "authorization", "--url", issuer]
            argv += ["--client-id", client_id, "--port", str(port), "--resource", resource]
            argv += ["-o", str(results)]

            def browse(url: str, callback: str = callback) -> str:
                return anyio.from_thread.run(browser.authorize, url, callback)

            env = {**toolchain.toolchain_env(), **(tls.env() if tls else {})}
            endpoint = metadata["authorization_endpoint"]
            status = await anyio.to_thread.run_sync(
                harness.run_authorization_suite, argv, endpoint, log, browse, env
            )
            said = log.read_text(errors="replace").lower()
            if status == 0 or not any(mark in said for mark in harness.IN_USE):
                break
    scenarios = sorted(p.parent.name for p in results.glob("*/checks.json"))
    return SuiteRun(status, harness.check_counts(results), scenarios, log)
