"""Requests to Amazon Managed Service for Prometheus signed with AWS Signature Version 4
(service ``aps``), with credentials from the AWS chain as the AWS CLI finds them
(environment, profile, SSO, web identity, instance or pod role) through botocore, which
also refreshes expiring ones. Imported only when a client is built with
``--prometheus-sigv4``; botocore comes with ``pip install 'ktop-tui[aws]'``.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import requests

from ktop.scrub import Secrets

if TYPE_CHECKING:
    from botocore.credentials import Credentials

SERVICE = "aps"
"""The signing name of Amazon Managed Service for Prometheus."""
WORKSPACE_HOST = re.compile(r"^aps-workspaces\.([a-z0-9-]+)\.amazonaws\.com(\.cn)?$")
"""A workspace endpoint's host, which names its region."""


class SigV4Error(ValueError):
    """SigV4 cannot sign: botocore, a region or credentials missing (the message says)."""


NO_BOTOCORE = (
    "--prometheus-sigv4 needs botocore (the AWS credential chain): pip install 'ktop-tui[aws]'"
)
UNSIGNED = {"authorization", "user-agent", "content-length", "connection", "accept-encoding"}
"""Headers left out of the signature (a proxy or the transport may change them)."""


def workspace_region(url: str) -> str | None:
    """The region a workspace URL names (``aps-workspaces.REGION.amazonaws.com``)."""
    return m.group(1) if (m := WORKSPACE_HOST.match(urlsplit(url).hostname or "")) else None


class SigV4(requests.auth.AuthBase):
    """Signs every request with the current credentials (refreshed when they expire);
    their secret parts are recorded into the session's secrets.
    """

    def __init__(self, credentials: Credentials, region: str, secrets: Secrets) -> None:
        self.credentials = credentials
        self.region = region
        self.secrets = secrets

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        """Add ``X-Amz-Date``, the session token if any, and ``Authorization`` to ``r``."""
        from botocore.auth import SigV4Auth  # noqa: PLC0415
        from botocore.awsrequest import AWSRequest  # noqa: PLC0415

        frozen = self.credentials.get_frozen_credentials()
        self.secrets.add(frozen.secret_key)
        if frozen.token:
            self.secrets.add(frozen.token)
        headers = {k: v for k, v in r.headers.items() if k.lower() not in UNSIGNED}
        signed = AWSRequest(method=r.method, url=r.url, data=r.body or b"", headers=headers)
        SigV4Auth(frozen, SERVICE, self.region).add_auth(signed)
        for name, value in signed.headers.items():
            r.headers[name] = value
        return r


def sigv4_auth(url: str, region: str | None, secrets: Secrets) -> SigV4:
    """The signer for ``url``: ``region`` if given, else the workspace URL's, else the AWS
    configuration's; :class:`SigV4Error` when botocore, a region or credentials
    are missing.
    """
    try:
        import botocore.session  # noqa: PLC0415
    except ImportError:
        raise SigV4Error(NO_BOTOCORE) from None
    session = botocore.session.get_session()
    region = region or workspace_region(url) or session.get_config_variable("region")
    if not region:
        raise SigV4Error(
            "--prometheus-sigv4: no region (give --prometheus-sigv4-region, use the "
            "workspace URL aps-workspaces.REGION.amazonaws.com, or set AWS_REGION)"
        )
    from botocore.exceptions import BotoCoreError  # noqa: PLC0415

    try:
        credentials = session.get_credentials()
    except BotoCoreError as exc:  # a profile that does not exist, an SSO login expired
        raise SigV4Error(f"--prometheus-sigv4: AWS credentials: {exc}") from None
    if credentials is None:
        raise SigV4Error(
            "--prometheus-sigv4: no AWS credentials found (environment, ~/.aws profile, "
            "SSO, web identity, instance or pod role)"
        )
    return SigV4(credentials, str(region), secrets)
