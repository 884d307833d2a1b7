#!/usr/bin/env python3
"""Writes fixtures.json: JWK Sets and ID tokens signed with them, for the unit tests of the ID-token signature check
(Tests/PortalAuthTests/Crypto/JSONWebKeyTests.swift, Discovery/IDTokenSignatureTests.swift).

Run with the test venv (jwcrypto comes with django-oauth-toolkit): $PORTAL_AUTH_VENV/bin/python make-fixtures.py
The claims are fixed (iat 1 799 999 990, exp 1 800 003 600); the tests use a clock at 1 800 000 000."""
import base64
import json
import pathlib

from jwcrypto import jwk, jws
from jwcrypto.common import json_encode

CLAIMS = {"iss": "https://idp.example/o", "aud": "portal-auth-test", "sub": "42", "iat": 1799999990,
          "exp": 1800003600, "preferred_username": "alice"}


def sign(key, alg, kid=True, claims=CLAIMS):
    header = {"alg": alg, "typ": "JWT"}
    if kid:
        header["kid"] = key.key_id
    token = jws.JWS(json_encode(claims).encode())
    token.add_signature(key, alg=alg, protected=json_encode(header))
    return token.serialize(compact=True)


def tamper(token):
    head, body, signature = token.split(".")
    raw = bytearray(base64.urlsafe_b64decode(signature + "=" * (-len(signature) % 4)))
    raw[len(raw) // 2] ^= 0x01
    return ".".join([head, body, base64.urlsafe_b64encode(bytes(raw)).decode().rstrip("=")])


rsa1 = jwk.JWK.generate(kty="RSA", size=2048, kid="rsa-1")
rsa2 = jwk.JWK.generate(kty="RSA", size=2048, kid="rsa-2")
ec1 = jwk.JWK.generate(kty="EC", crv="P-256", kid="ec-1")
ed1 = jwk.JWK.generate(kty="OKP", crv="Ed25519", kid="ed-1")
small = jwk.JWK.generate(kty="RSA", size=1024, kid="rsa-small")


def public(*keys):
    return {"keys": [json.loads(key.export_public()) for key in keys]}


fixtures = {
    "claims": CLAIMS,
    "jwks": public(rsa1, ec1, ed1),
    "jwksRotated": public(rsa1, rsa2, ec1),
    "jwksSmall": public(small),
    "tokens": {
        "RS256": sign(rsa1, "RS256"),
        "PS256": sign(rsa1, "PS256"),
        "ES256": sign(ec1, "ES256"),
        "EdDSA": sign(ed1, "EdDSA"),
        "RS256-rotated": sign(rsa2, "RS256"),
        "RS256-no-kid": sign(rsa1, "RS256", kid=False),
        "ES256-no-kid": sign(ec1, "ES256", kid=False),
        "RS256-bad": tamper(sign(rsa1, "RS256")),
        "ES256-bad": tamper(sign(ec1, "ES256")),
        "PS256-bad": tamper(sign(rsa1, "PS256")),
        "EdDSA-bad": tamper(sign(ed1, "EdDSA")),
        "RS256-small": sign(small, "RS256"),
    },
}
pathlib.Path(__file__).with_name("fixtures.json").write_text(json.dumps(fixtures, indent=1) + "\n")
