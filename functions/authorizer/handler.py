"""API Gateway REQUEST authorizer: `Authorization: [Token|Bearer] <key>` → an IAM policy + {"tenant"}.

Handlers read the tenant from `requestContext.authorizer.tenant` (memory_engine.edge.http.tenant_of).
API Gateway caches the answer per Authorization header for the stage's TTL, and the cached policy
is reused for every method: so an allowed key gets every route of the stage, never one method.
The answer's `usageIdentifierKey` names the key's API key in the stage's usage plan (the API's key
source is AUTHORIZER): API Gateway applies that key's throttle and quota to the request.
"""

from __future__ import annotations

from typing import Any

from aws_lambda_powertools.utilities.data_classes.api_gateway_authorizer_event import (
    APIGatewayAuthorizerRequestEvent,
    APIGatewayAuthorizerResponse,
)

from memory_engine.composition import key_wiring
from memory_engine.edge.auth import authenticate, usage_key_value
from memory_engine.edge.logsafe import logger
from memory_engine.edge.observability import traced

# API Gateway answers 401 only for a failed invocation whose error message is exactly this.
UNAUTHORIZED = "Unauthorized"


class Unauthorized(Exception):
    def __init__(self) -> None:
        super().__init__(UNAUTHORIZED)


@traced
@logger().inject_lambda_context(clear_state=True)
def lambda_handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    request = APIGatewayAuthorizerRequestEvent(event)
    principal = authenticate(request.headers.get("Authorization"), key_wiring.key_resolver())  # any case
    if principal is None:
        logger().info("rejected API key")  # never the key itself
        raise Unauthorized()
    arn = request.parsed_arn
    policy = APIGatewayAuthorizerResponse(
        principal_id=principal.tenant,
        region=arn.region,
        aws_account_id=arn.aws_account_id,
        api_id=arn.api_id,
        stage=arn.stage,
        context=principal.context(),
        partition=arn.partition,
        usage_identifier_key=usage_key_value(principal.key_id),
    )
    policy.allow_all_routes()
    return policy.asdict()
