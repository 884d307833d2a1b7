import logging
import re

_QUERY = re.compile(r"\?[^\s\"]*")


class StripQueryStrings(logging.Filter):
    """Removes query strings (codes, tokens, states) from request log lines."""

    def filter(self, record):
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - never break logging
            return True
        if "?" in message:
            record.msg = _QUERY.sub("?…", message)
            record.args = ()
        return True
