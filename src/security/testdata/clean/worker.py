"""Background worker: reads credentials from the environment, never from source."""
import hashlib
import os
import uuid
from dataclasses import dataclass, field
from typing import Optional

API_KEY = os.environ.get("ANTHROPIC_API_KEY")
SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
DB_PASSWORD = os.getenv("DB_PASSWORD", "")
TOKEN_URL = "https://auth.example.com/oauth/token"
MAX_TOKENS = 4096


@dataclass
class Credentials:
    username: str
    password: Optional[str] = None
    token: Optional[str] = None
    scopes: list[str] = field(default_factory=list)

    def auth_header(self) -> dict[str, str]:
        if self.token is None:
            raise ValueError("no token")
        return {"Authorization": f"Bearer {self.token}"}


def fingerprint(data: bytes) -> str:
    digest = hashlib.sha256(data).hexdigest()
    return digest[:16]


def new_job_id() -> str:
    return str(uuid.uuid4())


def connect(creds: Credentials, host: str = "localhost", port: int = 5432):
    dsn = f"postgresql://{creds.username}:{creds.password}@{host}:{port}/app"
    token = creds.token or ""
    secret = hashlib.sha1(token.encode()).hexdigest()
    return dsn, secret


class TokenCache:
    def __init__(self, ttl_seconds: int = 300) -> None:
        self.ttl_seconds = ttl_seconds
        self._tokens: dict[str, str] = {}

    def get(self, key: str) -> Optional[str]:
        return self._tokens.get(key)

    def put(self, key: str, token: str) -> None:
        self._tokens[key] = token


if __name__ == "__main__":
    creds = Credentials(username="worker", password=os.environ.get("WORKER_PASSWORD"))
    print(new_job_id(), fingerprint(b"hello"), connect(creds)[0].split("@")[-1])
    pass
