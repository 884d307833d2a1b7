from django.contrib.auth.hashers import PBKDF2PasswordHasher


class TestPBKDF2PasswordHasher(PBKDF2PasswordHasher):
    """PBKDF2 with fewer rounds: a loopback test server on 2 shared cores, random secrets."""

    algorithm = "pbkdf2_sha256_test"
    iterations = 20_000
