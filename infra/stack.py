"""The whole service in one stack: data, workers, search, embedding, API, monitoring.

Functions are made in one place (`_function`), so that each one's environment and permissions
follow from its needs (declared on its route in `functions/routes.py`, or in `infra/access.py`
for the functions that are no route) and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from aws_cdk import ArnFormat, CfnOutput, CustomResource, Duration, Stack
from aws_cdk import aws_iam as iam
from aws_cdk import aws_lambda as lambda_
from aws_cdk import custom_resources as cr
from constructs import Construct

from functions.routes import REST_ROUTES, WORKERS, Route
from infra.access import TABLE_ACTIONS, MissingNeeds, Need, function_needs, uses_engine
from infra.api import Api
from infra.config import StackConfig
from infra.data import Data
from infra.embedding import Embedding
from infra.monitoring import Monitoring
from infra.nag import acknowledge
from infra.runtime import API_FUNCTION_TIMEOUT_SECONDS, Runtime
from infra.search import Search
from infra.worker import Worker

EXTRACTION_WORKER = "extraction_worker"
# The functions that read MEMORY_ENGINE_CHAT_MODEL (`chatModel`): the chat route and the model list.
CHAT_MODEL_READERS = ("chat_completions", "chat_models")
# The chat model's whole answer (each wait included): what is left of the API function's 28 s
# after reading the user's memories (an embedding and a search) and before answering.
CHAT_UPSTREAM_DEADLINE_SECONDS = API_FUNCTION_TIMEOUT_SECONDS - 8


class MemoryEngineStack(Stack):
    def __init__(
        self,
        scope: Construct,
        construct_id: str,
        *,
        config: StackConfig,
        routes: Sequence[Route] = REST_ROUTES,
        workers: Sequence[str] = WORKERS,
        **kwargs: object,
    ) -> None:
        super().__init__(scope, construct_id, **kwargs)
        self.config = config
        self.needs = function_needs(routes)  # a route without needs stops the synth here
        self.data = Data(self, "Data", protect=config.protect_data, existing=config.existing_table_name)
        self.runtime = Runtime(self, "Runtime", config=config)
        self.queues = {name: Worker(self, f"Queue-{name}", config=config) for name in workers}
        self.search = Search(self, "Search", config=config)
        self.embedding = Embedding(self, "Embedding", config=config, runtime=self.runtime)
        self.functions: dict[str, lambda_.Function] = {}

        worker_functions = {}
        for name, worker in self.queues.items():
            function = self._function(self, name, timeout=Duration.seconds(config.worker_timeout_seconds))
            worker.consume(function)
            if name == EXTRACTION_WORKER:
                worker.sweep(function)
                self.data.grant_buffer_scan(function)
            worker_functions[name] = (worker, function)

        self.api = Api(
            self,
            "Api",
            config=config,
            routes=routes,
            authorizer_function=self._function(self, "authorizer", memory_size=512),
            handler_for=lambda scope, folder: self.functions.get(folder) or self._function(scope, folder),
        )
        self._index_bootstrap()
        self.search.seal()  # every function that reaches the index exists by now
        self.monitoring = Monitoring(
            self,
            "Monitoring",
            config=config,
            api=self.api.rest_api,
            workers=worker_functions,
            functions=self.functions,
        )
        self._outputs()

    # Functions --------------------------------------------------------------------------------

    def _function(
        self, scope: Construct, folder: str, *, memory_size: int = 1024, timeout: Duration | None = None
    ) -> lambda_.Function:
        if folder not in self.needs:
            raise MissingNeeds(
                f"Function {folder} has no needs: declare them on its route in functions/routes.py "
                "(or, for a function that is no route, in infra/access.py OTHER_FUNCTION_NEEDS)."
            )
        needs = self.needs[folder]
        function = self.runtime.python_function(
            scope,
            _construct_id(folder),
            folder,
            environment=self.function_environment(needs, folder),
            description=f"memory-engine {folder}",
            memory_size=memory_size,
            timeout=timeout,
        )
        self._grant(function, needs)
        self.functions[folder] = function
        return function

    def function_environment(self, needs: frozenset[Need], folder: str) -> dict[str, str]:
        """What `memory_engine.settings` reads, for a function with these needs."""
        chat = self._chat_environment(folder)
        if not needs:
            return chat
        env = {"MEMORY_ENGINE_BACKEND": "aws", "MEMORY_ENGINE_TABLE_NAME": self.data.table.table_name, **chat}
        if not uses_engine(needs):
            # The authorizer reads keys only (memory_engine.settings.KeySettings): no queue, no index.
            return env
        config = self.config
        env |= {
            "MEMORY_ENGINE_QUEUE_URL": self.queues[EXTRACTION_WORKER].queue.queue_url,
            "MEMORY_ENGINE_OPENSEARCH_URL": self.search.endpoint,
            "MEMORY_ENGINE_OPENSEARCH_SERVICE": self.search.service,
            "MEMORY_ENGINE_OPENSEARCH_INDEX": self.search.index_name,
            "MEMORY_ENGINE_OPENSEARCH_ANALYZER": self.search.analyzer,
            "MEMORY_ENGINE_EMBEDDING_DIMENSION": str(config.dimension),
            **self.embedding.environment(),
        }
        if folder in self.queues:
            # Below the redrive's count: a delivery past the attempts (after runs that never
            # settled) still reaches the worker, which parks it saying so (usecases.jobs.attempt).
            attempts = min(config.job_attempts, config.max_receive_count - 1)
            env["MEMORY_ENGINE_WORKER_MAX_RECEIVES"] = str(attempts)
            env["MEMORY_ENGINE_DEAD_LETTER_URL"] = self.queues[folder].dead_letters.queue_url
        if Need.EXTRACT in needs and folder not in self.queues:
            # Behind API Gateway: the model's whole answer must end inside the function's timeout.
            wait = str(CHAT_UPSTREAM_DEADLINE_SECONDS)
            env |= {"MEMORY_ENGINE_CHAT_TIMEOUT_SECONDS": wait, "MEMORY_ENGINE_CHAT_DEADLINE_SECONDS": wait}
        if Need.EXTRACT in needs:
            env["MEMORY_ENGINE_EXTRACTOR"] = config.extractor
            if config.llm_model:
                env["MEMORY_ENGINE_LLM_MODEL"] = config.llm_model
            if config.openai_base_url:
                env["OPENAI_BASE_URL"] = config.openai_base_url
            if config.openai_api_key_secret:
                # The secret's name, not its value: the function reads the key at run time
                # (memory_engine.adapters.aws.secrets), so no environment ever holds it.
                env["MEMORY_ENGINE_OPENAI_API_KEY_SECRET"] = config.openai_api_key_secret
        return env

    def _chat_environment(self, folder: str) -> dict[str, str]:
        """The chat model setting, for the functions that read it (`chatModel`)."""
        if folder in CHAT_MODEL_READERS and self.config.chat_model:
            return {"MEMORY_ENGINE_CHAT_MODEL": self.config.chat_model}
        return {}

    def _grant(self, function: lambda_.Function, needs: frozenset[Need]) -> None:
        role = function.role
        assert role is not None  # every function is made with its own role
        table = sorted(TABLE_ACTIONS[need] for need in needs if need in TABLE_ACTIONS)
        if table:
            self.data.grant(role, table)
        grants: dict[Need, Callable[[iam.IRole], object]] = {
            Need.KEYS_READ: self.data.grant_key_lookup,
            Need.QUEUE_SEND: self.queues[EXTRACTION_WORKER].grant_send,
            Need.INDEX_READ: self.search.grant_read,
            Need.INDEX_WRITE: self.search.grant_write,
            Need.INDEX_ADMIN: self.search.grant_admin,
            Need.EMBED: self.embedding.grant_invoke,
            Need.EXTRACT: self._grant_llm_key,
        }
        for need in sorted(needs):  # sorted: the same template on every synth
            grant = grants.get(need)
            if grant is not None:
                grant(role)

    def _grant_llm_key(self, role: iam.IRole) -> None:
        """GetSecretValue on the LLM key's secret, and nothing else (none without one)."""
        secret = self.config.openai_api_key_secret
        if not secret:
            return
        if not secret.startswith("arn:"):
            # A name: Secrets Manager appends "-" and six random characters to the ARN.
            secret = self.format_arn(
                service="secretsmanager",
                resource="secret",
                resource_name=f"{secret}-??????",
                arn_format=ArnFormat.COLON_RESOURCE_NAME,
            )
        role.add_to_principal_policy(
            iam.PolicyStatement(actions=["secretsmanager:GetSecretValue"], resources=[secret])
        )

    # Deploy-time index creation ----------------------------------------------------------------

    def _index_bootstrap(self) -> None:
        # CDK's Provider framework speaks CloudFormation's response protocol; the function is a
        # plain on_event handler (returns on success, raises on failure).
        function = self._function(self, "index_bootstrap", timeout=Duration.minutes(10))
        bootstrap_cfn = function.node.default_child
        assert isinstance(bootstrap_cfn, lambda_.CfnFunction)
        role, log_group = self.runtime.role_and_logs(self, "SearchIndexProvider", traced=False)
        provider = cr.Provider(
            self,
            "SearchIndexProvider",
            on_event_handler=function,
            framework_on_event_role=role,
            log_group=log_group,
        )
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::<{self.get_logical_id(bootstrap_cfn)}.Arn>:*]",
            "CDK's Provider framework may invoke any version of the index bootstrap function, and "
            "only that function.",
        )
        from memory_engine.adapters.aws.opensearch_bodies import added_fields

        resource = CustomResource(
            self,
            "SearchIndex",
            service_token=provider.service_token,
            # Any change here (index name, dimension, a field added to the mapping) re-runs the
            # bootstrap on deploy, which adds new fields to an existing index.
            properties={
                "Index": self.search.index_name,
                "Dimension": str(self.config.dimension),
                "Analyzer": self.search.analyzer,
                "Service": self.search.service,
                "Fields": ",".join(sorted(added_fields()["properties"])),
            },
        )
        resource.node.add_dependency(self.search)  # after the collection and its access policy
        # The mapping is strict: a function writing a new field before the bootstrap added it
        # would have its bulk refused, so the writers are updated after the index.
        for folder, function in sorted(self.functions.items()):
            if Need.INDEX_WRITE in self.needs[folder]:
                function.node.add_dependency(resource)

    # Outputs ----------------------------------------------------------------------------------

    def _outputs(self) -> None:
        CfnOutput(self, "ApiUrl", value=self.api.url, description="base URL of the API (stage included)")
        CfnOutput(self, "TableName", value=self.data.table.table_name)
        CfnOutput(
            self,
            "UsagePlanId",
            value=self.api.usage_plan.usage_plan_id,
            description="MEMORY_ENGINE_USAGE_PLAN_ID for `memory-engine keys` (per-key rate limits)",
        )
        extraction = self.queues[EXTRACTION_WORKER]
        CfnOutput(self, "QueueUrl", value=extraction.queue.queue_url)
        CfnOutput(self, "DeadLetterQueueUrl", value=extraction.dead_letters.queue_url)
        CfnOutput(self, "SearchEndpoint", value=self.search.endpoint)
        CfnOutput(self, "DashboardName", value=self.monitoring.dashboard.dashboard_name)
        if self.embedding.function is not None:
            CfnOutput(self, "EmbeddingFunctionName", value=self.embedding.function.function_name)


def _construct_id(folder: str) -> str:
    """`fork` → `Fork`: readable logical ids (and `sam local invoke` names)."""
    return "".join(part.capitalize() for part in folder.split("_"))
