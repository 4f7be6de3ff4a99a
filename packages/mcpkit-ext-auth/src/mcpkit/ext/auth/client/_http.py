"""Small HTTP helpers of the client flows: origins, ``WWW-Authenticate`` challenges.

Rules:
1. A challenge is parsed per RFC 9110 §11.6.1 (``scheme param=value, param="quoted"``);
   only the first ``Bearer`` or ``DPoP`` challenge's parameters are returned, names
   lower-cased; a malformed header yields what was parsed before the fault.
2. An origin is ``scheme://host[:port]`` lower-cased, the default port left out.
"""

from __future__ import annotations

import re
from urllib.parse import urlsplit

__all__ = ["Challenge", "bearer_challenge", "origin_of", "parse_challenges"]

_TOKEN = r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
_PARAM = re.compile(rf'\s*({_TOKEN})\s*=\s*(?:"((?:[^"\\]|\\.)*)"|({_TOKEN}))\s*(,)?')
_SCHEME = re.compile(rf"\s*,?\s*({_TOKEN})(?:\s+|$)")


class Challenge(dict[str, str]):
    """One auth challenge's parameters (``resource_metadata``, ``scope``, ``error``...),
    with its ``scheme`` (``bearer``/``dpop``, lower-cased)."""

    scheme: str = ""


def parse_challenges(header: str) -> list[Challenge]:
    """Every challenge in a ``WWW-Authenticate`` value (rule 1), in order."""
    out: list[Challenge] = []
    pos = 0
    text = header or ""
    while pos < len(text):
        m = _SCHEME.match(text, pos)
        if m is None:
            break
        challenge = Challenge()
        challenge.scheme = m.group(1).lower()
        pos = m.end()
        while pos < len(text):
            p = _PARAM.match(text, pos)
            if p is None:
                break
            value = p.group(2) if p.group(2) is not None else p.group(3)
            challenge[p.group(1).lower()] = re.sub(r"\\(.)", r"\1", value or "")
            pos = p.end()
            if p.group(4) is None:
                break
        out.append(challenge)
        if pos == m.end() and not challenge:
            continue
    return out


def bearer_challenge(header: str) -> Challenge:
    """The parameters of the first ``Bearer`` or ``DPoP`` challenge (empty if none)."""
    for challenge in parse_challenges(header):
        if challenge.scheme in ("bearer", "dpop"):
            return challenge
    return Challenge()


def origin_of(url: str) -> str:
    """Rule 2."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"
    port = parts.port
    if port is None or (scheme, port) in (("http", 80), ("https", 443)):
        return f"{scheme}://{host}"
    return f"{scheme}://{host}:{port}"
