"""In-process state of the test server: run-time configuration, request statistics and
the per-request context that the portal face passes down into DOT's validator.

The server is one process (Django's threaded runserver), so a lock is enough.
"""
import contextvars
import hashlib
import os
import threading
import time
from collections import Counter
from datetime import datetime, timezone

from django.conf import settings

_lock = threading.Lock()

_DEFAULT_CONFIG = {
    # Lifetime of newly issued access tokens (both faces, unless a portal request names one).
    "access_token_seconds": settings.ACCESS_TOKEN_SECONDS,
    # ArcGIS keeps the refresh token on grant_type=refresh_token; True makes the portal face
    # rotate it like the OIDC face (exchange_refresh_token always rotates).
    "portal_rotate_refresh_tokens": os.environ.get("PORTAL_AUTH_TEST_PORTAL_ROTATE", "") == "1",
    # Artificial latency of every token-endpoint request (both faces), milliseconds.
    "token_delay_ms": 0,
    # The next N token-endpoint requests (both faces) fail with HTTP `fail_status`.
    "fail_next_token_requests": 0,
    "fail_status": 503,
    # The next N device-code polls (RFC 8628) are answered `slow_down`.
    "device_slow_down_polls": 0,
    # The `interval` of new device authorizations, seconds (0: the start-up value,
    # PORTAL_AUTH_TEST_DEVICE_INTERVAL). Polls sooner than a grant's interval get `slow_down`.
    "device_interval_seconds": 0,
    # The `expires_in` of new device authorizations, seconds (0: DOT's default, 1800).
    "device_code_seconds": 0,
    # An OpenID Connect relying-party case the OIDC face plays (portaltest/oidccases.py; "" behaves).
    "oidc_case": "",
    # The OIDC face's discovery document advertises its RFC 7009 revocation endpoint (/o/revoke_token/), as most
    # providers do; DOT's own document names none.
    "advertise_revocation": False,
}
_config = dict(_DEFAULT_CONFIG)

# Set by the portal views around calls into DOT: {"rotate": bool|None, "expires_in": int|None}.
request_context = contextvars.ContextVar("portaltest_request_context", default=None)
# The Django request being served (set by middleware), for validator hooks that need the session.
current_request = contextvars.ContextVar("portaltest_current_request", default=None)


def get_config():
    with _lock:
        return dict(_config)


def update_config(changes):
    """Validates and applies a partial configuration; returns the new configuration."""
    if not isinstance(changes, dict):
        raise ValueError("expected a JSON object")
    checked = {}
    for key, value in changes.items():
        if key not in _DEFAULT_CONFIG:
            raise ValueError(f"unknown setting {key!r}; known: {', '.join(sorted(_DEFAULT_CONFIG))}")
        expected = type(_DEFAULT_CONFIG[key])
        if expected is str:
            from .oidccases import CASES

            if value not in CASES:
                raise ValueError(f"{key} must be one of {', '.join(repr(case) for case in CASES)}")
        elif expected is bool:
            if not isinstance(value, bool):
                raise ValueError(f"{key} must be true or false")
        elif not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise ValueError(f"{key} must be a non-negative integer")
        checked[key] = value
    if checked.get("access_token_seconds") == 0:
        raise ValueError("access_token_seconds must be at least 1")
    with _lock:
        _config.update(checked)
        return dict(_config)


def reset_config():
    with _lock:
        _config.clear()
        _config.update(_DEFAULT_CONFIG)
        return dict(_config)


def take_injected_failure():
    """Returns the HTTP status to fail this token request with, or None."""
    with _lock:
        if _config["fail_next_token_requests"] > 0:
            _config["fail_next_token_requests"] -= 1
            _stats["injected_failures"] += 1
            return _config["fail_status"]
    return None


# The polling state of each device authorization (RFC 8628 §3.5), by a hash of its device
# code: the interval its client must keep (the one handed out, 5 s more after each
# slow_down) and when it last polled.
_device_polling = {}
# A poll this much sooner than the interval still counts as on time (clock granularity).
_POLL_TOLERANCE_SECONDS = 0.2


def _device_key(device_code):
    return hashlib.sha256(device_code.encode()).hexdigest()


def device_authorization_overrides():
    """The run-time `interval` and `expires_in` of new device authorizations ({} for start-up values)."""
    with _lock:
        overrides = {}
        if _config["device_interval_seconds"]:
            overrides["interval"] = _config["device_interval_seconds"]
        if _config["device_code_seconds"]:
            overrides["expires_in"] = _config["device_code_seconds"]
        return overrides


def device_authorization_issued(device_code, interval):
    """Remembers a new device authorization's polling interval."""
    with _lock:
        _device_polling[_device_key(device_code)] = {"interval": float(interval), "last": None}


def take_device_slow_down(device_code, default_interval):
    """True when this device-code poll is to be answered `slow_down`: forced by the test
    controls, or sooner than the grant's interval after its previous poll. Each slow_down
    adds 5 s to the interval the client must keep from then on (RFC 8628 §3.5)."""
    now = time.monotonic()
    with _lock:
        state = _device_polling.setdefault(_device_key(device_code), {"interval": float(default_interval), "last": None})
        forced = _config["device_slow_down_polls"] > 0
        if forced:
            _config["device_slow_down_polls"] -= 1
        too_soon = state["last"] is not None and now - state["last"] < state["interval"] - _POLL_TOLERANCE_SECONDS
        state["last"] = now
        if forced or too_soon:
            state["interval"] += 5
            _stats["device_slow_downs"] += 1
            return True
    return False


def record_device_poll(answer):
    """Records the answer to a device-code poll (`authorization_pending`, `slow_down`,
    `access_denied`, `expired_token`, `token`, …), in order, for the tests."""
    with _lock:
        if len(_stats["device_polls"]) < 1000:
            _stats["device_polls"].append(answer)


def access_token_lifetime(request=None):
    """oauthlib's `expires_in` callable (EXTRA_SERVER_KWARGS token_expires_in)."""
    context = request_context.get()
    if context and context.get("expires_in"):
        return int(context["expires_in"])
    with _lock:
        return _config["access_token_seconds"]


def _new_stats():
    return {
        "since": datetime.now(timezone.utc),
        "token_requests": Counter(),
        "by_face": {"oauth": Counter(), "portal": Counter()},
        "token_errors": Counter(),
        "revocations": 0,
        "injected_failures": 0,
        "device_slow_downs": 0,
        "device_polls": [],
    }


_stats = _new_stats()


def count_token_request(face, grant_type):
    with _lock:
        _stats["token_requests"][grant_type] += 1
        _stats["by_face"][face][grant_type] += 1


def count_token_error(face, grant_type):
    with _lock:
        _stats["token_errors"][grant_type] += 1


def count_revocation():
    with _lock:
        _stats["revocations"] += 1


def stats_snapshot():
    with _lock:
        return {
            "since": _stats["since"].isoformat().replace("+00:00", "Z"),
            "token_requests_total": sum(_stats["token_requests"].values()),
            "token_requests": dict(_stats["token_requests"]),
            "token_requests_by_face": {face: dict(c) for face, c in _stats["by_face"].items()},
            "token_errors": dict(_stats["token_errors"]),
            "revocations": _stats["revocations"],
            "injected_failures": _stats["injected_failures"],
            "device_slow_downs": _stats["device_slow_downs"],
            "device_polls": list(_stats["device_polls"]),
        }


def reset_stats():
    global _stats
    with _lock:
        _stats = _new_stats()
