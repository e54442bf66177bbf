"""API Gateway REST API: one method per route of `functions/routes.py`, one Lambda per function.

A route added to routes.py appears here with no other edit. Every route but health goes through
the REQUEST authorizer (cached per Authorization header). API Gateway's own refusals (401,
throttling, bad body, too large) answer in one body that holds the native error envelope and the
game and OpenAI dialects' error fields beside it, so every client reads its own.

Per-key rate limits: the API takes its API keys from the authorizer (key source AUTHORIZER), which
returns each memory-engine key's usage-plan key (`memory_engine.edge.auth.usage_key_value`); every route
but health requires one, and the stage's usage plan throttles (and optionally counts) per key.
`memory-engine keys create|rotate|revoke|sync` keeps the plan's keys in step with the key store.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_apigateway as apigw
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from aws_cdk import aws_wafv2 as wafv2
from constructs import Construct

from functions.routes import Route
from infra.config import StackConfig
from infra.nag import acknowledge
from infra.runtime import RETENTION

MethodHandler = Callable[[Construct, str], lambda_.IFunction]

BODY_METHODS = {"POST", "PUT", "PATCH"}

ACCESS_LOG = {
    "requestId": "$context.requestId",
    "tenant": "$context.authorizer.principalId",
    "usagePlanKey": "$context.identity.apiKeyId",  # the API key the usage plan throttled by
    "ip": "$context.identity.sourceIp",
    "method": "$context.httpMethod",
    "resource": "$context.resourcePath",
    "status": "$context.status",
    "latencyMs": "$context.responseLatency",
    "integrationLatencyMs": "$context.integration.latency",
    "responseLength": "$context.responseLength",
    "error": "$context.error.message",
    "authorizerError": "$context.authorizer.error",
    "requestTime": "$context.requestTime",
}

# API Gateway's own answers, in the native error envelope (docs/api.md).
GATEWAY_RESPONSES: dict[str, tuple[str, str]] = {
    "UNAUTHORIZED": ("401", "Missing or invalid API key: send 'Authorization: Bearer <key>'."),
    "ACCESS_DENIED": ("401", "Missing or invalid API key: send 'Authorization: Bearer <key>'."),
    "MISSING_AUTHENTICATION_TOKEN": ("404", "No such route: see the README for the API's paths."),
    "BAD_REQUEST_BODY": ("400", "The request body is not valid JSON: send a JSON object."),
    "REQUEST_TOO_LARGE": ("413", "Request body too large: send less per request."),
    "THROTTLED": ("429", "Too many requests: retry after the seconds in Retry-After."),
    "QUOTA_EXCEEDED": (
        "429",
        "This API key's request quota for the period is used up: retry after it resets.",
    ),
    "INVALID_API_KEY": (
        "403",
        "This API key has no usage plan on this API yet: the operator enrolls it with "
        "`memory-engine keys sync`.",
    ),
    "AUTHORIZER_FAILURE": ("503", "The API key store is unavailable; retry shortly."),
    "AUTHORIZER_CONFIGURATION_ERROR": ("503", "The API key store is unavailable; retry shortly."),
    "DEFAULT_5XX": ("503", "The service is unavailable; the request may be retried."),
}

# Headers of those answers (static: API Gateway cannot compute them). A throttled key gets tokens
# back within a second; a spent quota comes back only when its period resets, so an hour is a
# polite interval to check again.
GATEWAY_HEADERS: dict[str, dict[str, str]] = {
    "THROTTLED": {"Retry-After": "1"},
    "QUOTA_EXCEEDED": {"Retry-After": "3600"},
}


# OpenAI's error `type` for the statuses above, which its clients read.
_OPENAI_TYPES = {
    "400": "invalid_request_error",
    "401": "authentication_error",
    "403": "permission_error",
    "404": "not_found_error",
    "413": "invalid_request_error",
    "429": "rate_limit_error",
}


def error_template(status: str, message: str) -> str:
    """One body every dialect's client can read: a gateway response is per API, not per route, and
    its template is not VTL (it cannot branch on the path). The native envelope (`status`,
    `message`, `errors`), the game one's `code` and `msg`, and OpenAI's `error` object, side by side."""
    openai = {"message": message, "type": _OPENAI_TYPES.get(status, "api_error"), "param": None, "code": None}
    native = {"status": "error", "message": message, "errors": []}
    return json.dumps({**native, "code": int(status), "msg": message, "error": openai})


class Api(Construct):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        routes: Sequence[Route],
        authorizer_function: lambda_.IFunction,
        handler_for: MethodHandler,
    ) -> None:
        super().__init__(scope, construct_id)
        access_logs = logs.LogGroup(
            self,
            "AccessLogs",
            retention=RETENTION[config.retention_days],
            removal_policy=RemovalPolicy.RETAIN if config.protect_data else RemovalPolicy.DESTROY,
        )
        self.rest_api = apigw.RestApi(
            self,
            "RestApi",
            rest_api_name=config.stack_name,
            description="memory-engine: long-term memory for dialogue",
            endpoint_types=[apigw.EndpointType.REGIONAL],
            api_key_source_type=apigw.ApiKeySourceType.AUTHORIZER,  # never a caller's x-api-key
            cloud_watch_role=True,  # execution logs need the account's API Gateway logging role
            deploy_options=apigw.StageOptions(
                stage_name=config.stage,
                throttling_rate_limit=config.throttle_rate,
                throttling_burst_limit=config.throttle_burst,
                logging_level=apigw.MethodLoggingLevel.ERROR,
                data_trace_enabled=False,  # never log request bodies: they are users' conversations
                metrics_enabled=True,
                tracing_enabled=True,
                access_log_destination=apigw.LogGroupLogDestination(access_logs),
                access_log_format=apigw.AccessLogFormat.custom(json.dumps(ACCESS_LOG)),
            ),
        )
        acknowledge(
            self.rest_api,
            "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonAPIGatewayPushToCloudWatchLogs]",
            "The account-wide role API Gateway writes execution logs with; AWS's managed policy is "
            "the documented one for it and grants logs actions only.",
        )
        self.authorizer = apigw.RequestAuthorizer(
            self,
            "ApiKeyAuthorizer",
            handler=authorizer_function,
            identity_sources=[apigw.IdentitySource.header("Authorization")],
            results_cache_ttl=Duration.seconds(config.authorizer_cache_seconds),
        )
        self._json_object = self.rest_api.add_model(
            "JsonObject",
            content_type="application/json",
            schema=apigw.JsonSchema(
                schema=apigw.JsonSchemaVersion.DRAFT4, title="JsonObject", type=apigw.JsonSchemaType.OBJECT
            ),
        )
        self._body_validator = self.rest_api.add_request_validator(
            "BodyIsJsonObject", validate_request_body=True, validate_request_parameters=True
        )
        for response_type, (status, message) in GATEWAY_RESPONSES.items():
            headers = GATEWAY_HEADERS.get(response_type)
            self.rest_api.add_gateway_response(
                response_type.title().replace("_", ""),
                type=apigw.ResponseType.of(response_type),
                status_code=status,
                templates={"application/json": error_template(status, message)},
                # Header values are mapping expressions: a literal is quoted.
                response_headers={name: f"'{value}'" for name, value in headers.items()} if headers else None,
            )
        for route in routes:
            self._add_route(route, handler_for(self, route.function))
        self.usage_plan = self._usage_plan(config)
        self._protect(config)

    def _add_route(self, route: Route, function: lambda_.IFunction) -> None:
        resource = self.rest_api.root.resource_for_path(route.path.strip("/"))
        body = route.method in BODY_METHODS
        method = resource.add_method(
            route.method,
            apigw.LambdaIntegration(function, allow_test_invoke=False),
            authorizer=self.authorizer if route.auth else None,
            authorization_type=apigw.AuthorizationType.CUSTOM if route.auth else apigw.AuthorizationType.NONE,
            api_key_required=route.auth,  # the usage-plan key the authorizer names: per-key limits
            # Methods without a JSON body have their path and query validated by the handler
            # (pydantic), which names every bad field in its 4xx.
            request_validator=self._body_validator if body else None,
            request_models={"application/json": self._json_object} if body else None,
        )
        if not route.auth:
            reason = f"{route.method} {route.path} is public on purpose (liveness, no data behind it)."
            acknowledge(method, "AwsSolutions-APIG4", reason)
            acknowledge(method, "AwsSolutions-COG4", reason)
        else:
            acknowledge(
                method,
                "AwsSolutions-COG4",
                "Callers are services holding API keys (Authorization: [Token|Bearer] <key>), checked by the "
                "Lambda REQUEST authorizer against hashed keys; there are no Cognito users.",
            )

    def _usage_plan(self, config: StackConfig) -> apigw.UsagePlan:
        """Per-key throttle (and quota) on the stage; its keys are made by `memory-engine keys`."""
        quota = None
        if config.key_quota_limit is not None:
            quota = apigw.QuotaSettings(
                limit=config.key_quota_limit, period=apigw.Period[config.key_quota_period]
            )
        return self.rest_api.add_usage_plan(
            "UsagePlan",
            name=f"{config.stack_name}-per-key",
            description="memory-engine: one API key per memory-engine key (memory-engine keys create)",
            throttle=apigw.ThrottleSettings(
                rate_limit=config.key_throttle_rate, burst_limit=config.key_throttle_burst
            ),
            quota=quota,
            api_stages=[apigw.UsagePlanPerApiStage(api=self.rest_api, stage=self.rest_api.deployment_stage)],
        )

    def _protect(self, config: StackConfig) -> None:
        if config.waf_acl_arn:
            wafv2.CfnWebACLAssociation(
                self,
                "WebAcl",
                resource_arn=self.rest_api.deployment_stage.stage_arn,
                web_acl_arn=config.waf_acl_arn,
            )
            return
        acknowledge(
            self.rest_api.deployment_stage,
            "AwsSolutions-APIG3",
            "No WAF unless -c wafAclArn=<arn> names one: every route but health needs an API key, and "
            "stage throttling caps the rate; a web ACL costs a fixed monthly fee per stage.",
        )

    @property
    def url(self) -> str:
        return self.rest_api.url
