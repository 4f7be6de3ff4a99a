"""The non-interactive grants of the client, each a
:class:`~mcpkit.ext.auth.client.grant.Grant` for ``OAuthProvider(grant=...)``:

- :class:`ClientCredentials`: the client credentials grant with ``client_secret_basic``,
  ``client_secret_post`` or ``private_key_jwt`` (SEP-1046; declares
  ``io.modelcontextprotocol/oauth-client-credentials``);
- :class:`WorkloadIdentity`: a platform workload JWT as an RFC 7523 jwt-bearer grant
  (SEP-1933), read from a callable, a file or an environment variable;
- :class:`JwtBearer`: the plain RFC 7523 §2.1 jwt-bearer grant;
- :class:`EnterpriseManagedAuthorization`: RFC 8693 exchange of an SSO ID token for an
  ID-JAG at the enterprise IdP, then jwt-bearer at the MCP authorization server (SEP-990;
  declares ``io.modelcontextprotocol/enterprise-managed-authorization``).

DPoP proofs (RFC 9449, SEP-1932) for any grant come from :mod:`mcpkit.ext.auth.client.dpop`.
"""

from __future__ import annotations

from mcpkit.ext.auth.client.grants._common import (
    CLIENT_CREDENTIALS_EXTENSION,
    ENTERPRISE_MANAGED_EXTENSION,
    PrivateKeyJWT,
    env_source,
    file_source,
)
from mcpkit.ext.auth.client.grants.client_credentials import ClientCredentials
from mcpkit.ext.auth.client.grants.enterprise import EnterpriseManagedAuthorization
from mcpkit.ext.auth.client.grants.jwt_bearer import JwtBearer, WorkloadIdentity

__all__ = [
    "CLIENT_CREDENTIALS_EXTENSION",
    "ENTERPRISE_MANAGED_EXTENSION",
    "ClientCredentials",
    "EnterpriseManagedAuthorization",
    "JwtBearer",
    "PrivateKeyJWT",
    "WorkloadIdentity",
    "env_source",
    "file_source",
]
