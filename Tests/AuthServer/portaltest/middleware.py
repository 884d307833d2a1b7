import ipaddress
import json
import time

from django.http import HttpResponseForbidden, JsonResponse

from . import runtime

TOKEN_PATHS = {
    "/o/token/": "oauth",
    "/arcgis/sharing/rest/oauth2/token": "portal",
    "/arcgis/sharing/rest/oauth2/token/": "portal",
    "/arcgis/sharing/rest/generateToken": "portal",
    "/arcgis/sharing/rest/generateToken/": "portal",
}
REVOKE_PATHS = {
    "/o/revoke_token/",
    "/arcgis/sharing/rest/oauth2/revokeToken",
    "/arcgis/sharing/rest/oauth2/revokeToken/",
}


class LoopbackOnlyMiddleware:
    """Refuses any client that is not on the loopback interface (belt and braces: the
    server only binds 127.0.0.1)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        try:
            loopback = ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")).is_loopback
        except ValueError:
            loopback = False
        if not loopback:
            return HttpResponseForbidden("loopback clients only\n")
        return self.get_response(request)


class TokenEndpointStatsMiddleware:
    """Counts token-endpoint requests by grant type on both faces (before any view code
    runs, so a request that fails is counted too), and applies the injected latency and
    failures of /testctl/config."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        marker = runtime.current_request.set(request)
        try:
            return self.handle(request)
        finally:
            runtime.current_request.reset(marker)

    def handle(self, request):
        face = TOKEN_PATHS.get(request.path)
        if request.method == "POST" and request.path in REVOKE_PATHS:
            runtime.count_revocation()
        if face is None or request.method != "POST":
            return self.get_response(request)

        if "generateToken" in request.path:
            grant_type = "generateToken"
        else:
            grant_type = request.POST.get("grant_type", "") or "(none)"
        runtime.count_token_request(face, grant_type)

        config = runtime.get_config()
        if config["token_delay_ms"]:
            time.sleep(config["token_delay_ms"] / 1000.0)
        status = runtime.take_injected_failure()
        if status is not None:
            runtime.count_token_error(face, grant_type)
            return JsonResponse(
                {"error": "temporarily_unavailable", "error_description": "injected failure (testctl)"},
                status=status,
            )

        response = self.get_response(request)
        failed = response.status_code != 200
        if not failed and face == "portal":
            try:
                failed = "error" in json.loads(response.content)
            except (ValueError, TypeError):
                failed = True
        if failed:
            runtime.count_token_error(face, grant_type)
        return response
