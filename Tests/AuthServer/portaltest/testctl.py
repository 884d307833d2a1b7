"""Test-control endpoints (/testctl/...): loopback clients only, test server only."""
import json
from datetime import timedelta

from django.conf import settings
from django.http import JsonResponse
from django.utils import timezone
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_GET, require_POST
from oauth2_provider.models import get_access_token_model, get_refresh_token_model

from . import runtime
from .models import PortalRefreshInfo

AccessToken = get_access_token_model()
RefreshToken = get_refresh_token_model()


@require_GET
def health(request):
    return JsonResponse({"status": "ok", "issuer": settings.ISSUER, "base_url": settings.BASE_URL})


@require_GET
def stats(request):
    return JsonResponse(runtime.stats_snapshot())


@csrf_exempt
@require_POST
def reset_stats(request):
    runtime.reset_stats()
    return JsonResponse(runtime.stats_snapshot())


@csrf_exempt
@require_POST
def expire_access_tokens(request):
    """Every access token (both faces) expires now: its holder must refresh."""
    past = timezone.now() - timedelta(seconds=1)
    count = AccessToken.objects.filter(expires__gt=past).update(expires=past)
    return JsonResponse({"expired_access_tokens": count})


@csrf_exempt
@require_POST
def expire_refresh_tokens(request):
    """Every refresh token dies: DOT's REFRESH_TOKEN_EXPIRE_SECONDS counts from the
    access token's expiry, so access tokens are pushed that far into the past; the portal
    face's own refresh-token lifetimes end too (→ 498 "refresh_token expired")."""
    now = timezone.now()
    past = now - timedelta(seconds=settings.REFRESH_TOKEN_SECONDS + 60)
    access = AccessToken.objects.update(expires=past)
    portal = PortalRefreshInfo.objects.update(expires=now - timedelta(seconds=1))
    live = RefreshToken.objects.filter(revoked__isnull=True).count()
    return JsonResponse({"expired_access_tokens": access, "expired_portal_refresh_tokens": portal, "refresh_tokens": live})


@csrf_exempt
@require_POST
def expire_device_grants(request):
    """Every pending device authorization (RFC 8628) expires now: its polls get expired_token."""
    from oauth2_provider.models import get_device_grant_model

    Grant = get_device_grant_model()
    past = timezone.now() - timedelta(seconds=1)
    count = Grant.objects.filter(status=Grant.AUTHORIZATION_PENDING).update(expires=past)
    return JsonResponse({"expired_device_grants": count})


@csrf_exempt
def config(request):
    """GET: the run-time configuration. POST (JSON object): change some of it.
    DELETE: back to the start-up values."""
    if request.method == "GET":
        return JsonResponse(runtime.get_config())
    if request.method == "DELETE":
        return JsonResponse(runtime.reset_config())
    if request.method != "POST":
        return JsonResponse({"error": "GET, POST or DELETE"}, status=405)
    try:
        changes = json.loads(request.body or b"{}")
        return JsonResponse(runtime.update_config(changes))
    except ValueError as error:
        return JsonResponse({"error": str(error)}, status=400)


@require_GET
def tokens(request):
    """Counts of live tokens (no token values)."""
    now = timezone.now()
    return JsonResponse(
        {
            "access_tokens": AccessToken.objects.count(),
            "valid_access_tokens": AccessToken.objects.filter(expires__gt=now).count(),
            "refresh_tokens": RefreshToken.objects.filter(revoked__isnull=True).count(),
            "revoked_refresh_tokens": RefreshToken.objects.filter(revoked__isnull=False).count(),
        }
    )
