from django.db import models


class PortalGrantInfo(models.Model):
    """The ArcGIS `expiration` (refresh-token lifetime, minutes) asked for at
    /arcgis/sharing/rest/oauth2/authorize, keyed by the authorization code DOT issued."""

    code = models.CharField(max_length=255, unique=True)
    expiration_minutes = models.PositiveIntegerField()
    created = models.DateTimeField(auto_now_add=True)


class PortalRefreshInfo(models.Model):
    """Lifetime of a refresh token issued by the portal face (ArcGIS semantics: fixed at
    issue, renewed only by exchange_refresh_token), keyed by DOT's token checksum."""

    token_checksum = models.CharField(max_length=64, unique=True)
    expires = models.DateTimeField()
    lifetime_minutes = models.PositiveIntegerField()
