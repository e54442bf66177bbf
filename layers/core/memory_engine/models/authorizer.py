"""What the API Gateway authorizer hands every API function in `requestContext.authorizer`.

Written by `auth.Principal.context`, read by `http.tenant_of`. A module of its own so that an API
function reads its tenant without loading the key machinery (`auth`, `models.keys`) that only the
authorizer runs.
"""

from __future__ import annotations

TENANT_CONTEXT_KEY = "tenant"
KEY_ID_CONTEXT_KEY = "key_id"
