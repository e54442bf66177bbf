"""What every function shares: the core layer, and the role / log group / tracing boilerplate.

Each Python function ships only its own folder (`functions/<name>/`, imported as
`functions.<name>.handler`, as the local server does); the `memory_engine` package and its
runtime dependencies come from the layer `make layer` builds. No torch, no numpy in either.
"""

from __future__ import annotations

from collections.abc import Mapping

from aws_cdk import Duration, IgnoreMode, RemovalPolicy
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_logs as logs
from constructs import Construct

from infra.config import METRICS_NAMESPACE, ROOT, SERVICE, StackConfig
from infra.lambda_platform import PYTHON_VERSION
from infra.nag import acknowledge

# `Runtime.PYTHON_3_12` for PYTHON_VERSION "3.12": the one constant decides.
RUNTIME: lambda_.Runtime = getattr(lambda_.Runtime, "PYTHON_" + PYTHON_VERSION.replace(".", "_"))
ARCHITECTURE = lambda_.Architecture.X86_64  # the layer's wheels are x86_64 (infra.lambda_platform.ARCH)

# API Gateway REST ends an integration after 29 s with its own 504; a function behind it stops
# first, so that its own error answer (an OpenAI-shaped 502 from chat) reaches the client.
API_GATEWAY_TIMEOUT_SECONDS = 29
API_FUNCTION_TIMEOUT_SECONDS = API_GATEWAY_TIMEOUT_SECONDS - 1

RETENTION = {
    7: logs.RetentionDays.ONE_WEEK,
    14: logs.RetentionDays.TWO_WEEKS,
    30: logs.RetentionDays.ONE_MONTH,
    60: logs.RetentionDays.TWO_MONTHS,
    90: logs.RetentionDays.THREE_MONTHS,
    180: logs.RetentionDays.SIX_MONTHS,
    365: logs.RetentionDays.ONE_YEAR,
}

# Never staged into a function's code, even when a folder of that name sits in the repository.
HEAVY = [".venv", ".git", "node_modules", "cdk.out", "build", ".memory-engine", "**/__pycache__"]


class LayerMissing(RuntimeError):
    pass


def base_environment() -> dict[str, str]:
    return {
        "POWERTOOLS_SERVICE_NAME": SERVICE,
        "POWERTOOLS_METRICS_NAMESPACE": METRICS_NAMESPACE,
        "POWERTOOLS_LOG_LEVEL": "INFO",
        # The functions use no pydantic plugin; without this, building the first model scans every
        # installed distribution's entry points for one (part of each cold start, issue 46).
        "PYDANTIC_DISABLE_PLUGINS": "__all__",
    }


def function_code(folder: str) -> lambda_.Code:
    """`functions/__init__.py` and `functions/<folder>/`, from the repository root, nothing else."""
    return lambda_.Code.from_asset(
        str(ROOT),
        exclude=["*", "!functions/__init__.py", f"!functions/{folder}", *HEAVY],
        ignore_mode=IgnoreMode.DOCKER,
    )


class Runtime(Construct):
    """The core layer plus a factory of functions that each get their own role and log group."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self._config = config
        python_dir = config.layer_dir / "python"
        if not python_dir.is_dir():
            raise LayerMissing(
                f"No Lambda layer at {python_dir}: run `make layer` first "
                "(or pass -c layerDir=<a folder holding python/>)."
            )
        self.layer = lambda_.LayerVersion(
            self,
            "CoreLayer",
            code=lambda_.Code.from_asset(str(config.layer_dir)),
            compatible_runtimes=[RUNTIME],
            compatible_architectures=[ARCHITECTURE],
            description="memory_engine and its runtime dependencies (no torch, no numpy)",
        )

    def python_function(
        self,
        scope: Construct,
        construct_id: str,
        folder: str,
        *,
        environment: Mapping[str, str],
        description: str,
        memory_size: int = 1024,
        timeout: Duration | None = None,
    ) -> lambda_.Function:
        role, log_group = self.role_and_logs(scope, construct_id)
        function = lambda_.Function(
            scope,
            construct_id,
            runtime=RUNTIME,
            architecture=ARCHITECTURE,
            handler=f"functions.{folder}.handler.lambda_handler",
            code=function_code(folder),
            layers=[self.layer],
            role=role,
            log_group=log_group,
            environment={**base_environment(), **environment},
            memory_size=memory_size,
            timeout=timeout or Duration.seconds(API_FUNCTION_TIMEOUT_SECONDS),
            tracing=lambda_.Tracing.ACTIVE,
            description=description,
        )
        acknowledge(
            function,
            "AwsSolutions-L1",
            f"{RUNTIME.name} on purpose: Amazon Linux 2023, the platform the layer's and the "
            "embedding image's wheels are resolved for (infra.lambda_platform, checked by "
            "tests/infra/test_artifacts.py); it moves with that constant, not ahead of it.",
        )
        return function

    def image_function(
        self,
        scope: Construct,
        construct_id: str,
        *,
        code: lambda_.DockerImageCode,
        environment: Mapping[str, str],
        description: str,
        memory_size: int,
        timeout: Duration,
    ) -> lambda_.DockerImageFunction:
        role, log_group = self.role_and_logs(scope, construct_id)
        return lambda_.DockerImageFunction(
            scope,
            construct_id,
            code=code,
            architecture=ARCHITECTURE,
            role=role,
            log_group=log_group,
            environment={**base_environment(), **environment},
            memory_size=memory_size,
            timeout=timeout,
            tracing=lambda_.Tracing.ACTIVE,
            description=description,
        )

    def role_and_logs(
        self, scope: Construct, construct_id: str, *, traced: bool = True
    ) -> tuple[iam.Role, logs.LogGroup]:
        """A function's own role and log group (`traced`: it sends X-Ray segments)."""
        # An own role with only its own log group, instead of the managed basic-execution policy
        # (which may write to any log group of the account).
        log_group = logs.LogGroup(
            scope,
            f"{construct_id}Logs",
            retention=RETENTION[self._config.retention_days],
            removal_policy=RemovalPolicy.RETAIN if self._config.protect_data else RemovalPolicy.DESTROY,
        )
        role = iam.Role(
            scope,
            f"{construct_id}Role",
            assumed_by=iam.ServicePrincipal("lambda.amazonaws.com"),
        )
        log_group.grant_write(role)
        if not traced:
            return role, log_group
        acknowledge(
            role,
            "AwsSolutions-IAM5[Resource::*]",
            "X-Ray PutTraceSegments/PutTelemetryRecords (active tracing) support no resource-level "
            "permissions; every other statement of this role names its resources.",
        )
        return role, log_group
