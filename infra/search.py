"""The search index: an OpenSearch Serverless vector collection (default) or a managed domain.

Serverless ("aoss"): encryption, network and data-access policies, a VECTORSEARCH collection.
Functions reach it over HTTPS with SigV4; what each may do with the index is decided by the
data-access policy, which lists the roles that read, write or create the index.
Managed domain ("es", `-c search=es`): one domain, encrypted, HTTPS only, IAM-authorised.
"""

from __future__ import annotations

from aws_cdk import RemovalPolicy, Stack
from aws_cdk import aws_ec2 as ec2
from aws_cdk import aws_iam as iam
from aws_cdk import aws_opensearchserverless as aoss
from aws_cdk import aws_opensearchservice as opensearch
from constructs import Construct

from infra.config import StackConfig
from infra.nag import acknowledge

# Whatever the stage: the index is rebuilt from the table (the system of record) after a destroy.
SEARCH_REMOVAL = RemovalPolicy.DESTROY
AWS_CUSTOM_RESOURCE_ID = "AWS679f53fac002430cb0da5b7982bd2287"  # CDK's fixed singleton id
READ_PERMISSIONS = ["aoss:ReadDocument", "aoss:DescribeIndex"]
WRITE_PERMISSIONS = ["aoss:ReadDocument", "aoss:WriteDocument", "aoss:DescribeIndex"]
ADMIN_PERMISSIONS = ["aoss:CreateIndex", "aoss:UpdateIndex", "aoss:DescribeIndex"]
# What an operator (`searchAdminPrincipals`) runs by hand: `memory-engine create-index [--recreate]`
# (HEAD, PUT, PUT _mapping, DELETE the index) and `reindex [--reembed]` (search copies, bulk writes).
OPERATOR_PERMISSIONS = [
    "aoss:CreateIndex",
    "aoss:UpdateIndex",
    "aoss:DeleteIndex",
    "aoss:DescribeIndex",
    "aoss:ReadDocument",
    "aoss:WriteDocument",
]
OPERATOR_DOMAIN_ACTIONS = [
    "es:ESHttpGet",
    "es:ESHttpHead",
    "es:ESHttpPost",
    "es:ESHttpPut",
    "es:ESHttpDelete",
]


class Search(Construct):
    """`endpoint` (https URL), `service` ("aoss" | "es") and `analyzer` (the text analysis of the
    index: nori by default, see docs/korean.md) go to the functions' environment."""

    def __init__(self, scope: Construct, construct_id: str, *, config: StackConfig) -> None:
        super().__init__(scope, construct_id)
        self.service = config.search
        self.index_name = config.index_name
        self.analyzer = config.search_analyzer
        self.operators = config.admin_principals
        self._roles: dict[str, list[iam.IRole]] = {"read": [], "write": [], "admin": []}
        self.access_policy: aoss.CfnAccessPolicy | None = None
        if config.search == "aoss":
            self._serverless(config)
        else:
            self._domain(config)

    # Serverless -------------------------------------------------------------------------------

    def _serverless(self, config: StackConfig) -> None:
        name = config.resource_prefix
        collection_rule = [{"ResourceType": "collection", "Resource": [f"collection/{name}"]}]
        encryption = aoss.CfnSecurityPolicy(
            self,
            "EncryptionPolicy",
            name=f"{name}-enc",
            type="encryption",
            policy=Stack.of(self).to_json_string({"Rules": collection_rule, "AWSOwnedKey": True}),
        )
        # Public endpoint, IAM-authenticated: the functions run outside a VPC (no NAT to pay for).
        network = aoss.CfnSecurityPolicy(
            self,
            "NetworkPolicy",
            name=f"{name}-net",
            type="network",
            policy=Stack.of(self).to_json_string([{"Rules": collection_rule, "AllowFromPublic": True}]),
        )
        self.collection = aoss.CfnCollection(
            self,
            "Collection",
            name=name,
            type="VECTORSEARCH",
            # Standby replicas double the OCUs (cost) for availability: prod only.
            standby_replicas="ENABLED" if config.is_prod else "DISABLED",
            description="memory-engine memories: k-NN + BM25",
        )
        self.collection.add_resource_dependency(encryption)
        self.collection.add_resource_dependency(network)
        # The index is derived data (`memory-engine reindex` rebuilds it from the table): it goes
        # with the stack, with its policies, so that the stage can be deployed again under the
        # same names. Kept, the collection would keep its name while its policies went, and the
        # next deploy would fail on the name (docs/aws.md, "Destroy and deploy again").
        self.collection.apply_removal_policy(SEARCH_REMOVAL)
        self.endpoint = self.collection.attr_collection_endpoint
        self._resource_arn = self.collection.attr_arn

    def seal(self) -> None:
        """Write the data-access policy, once every function has been granted its part."""
        if self.service != "aoss" or self.access_policy is not None:
            return
        name = self.collection.name
        self.access_policy = aoss.CfnAccessPolicy(
            self, "DataAccessPolicy", name=f"{name}-data", type="data", policy=self._data_rules(name)
        )

    def _data_rules(self, collection: str) -> str:
        index = [f"index/{collection}/{self.index_name}*"]  # the index and its versioned copies
        rules = []
        for group, permissions in (
            ("read", READ_PERMISSIONS),
            ("write", WRITE_PERMISSIONS),
            ("admin", ADMIN_PERMISSIONS),
        ):
            roles = self._roles[group]
            if roles:
                rules.append(
                    {
                        "Description": f"{group} the memories index",
                        "Rules": [{"ResourceType": "index", "Resource": index, "Permission": permissions}],
                        "Principal": [role.role_arn for role in roles],
                    }
                )
        if self.operators:
            rules.append(
                {
                    "Description": "operate the memories index (create-index, reindex)",
                    "Rules": [
                        {"ResourceType": "index", "Resource": index, "Permission": OPERATOR_PERMISSIONS}
                    ],
                    "Principal": list(self.operators),
                }
            )
        return Stack.of(self).to_json_string(rules)

    # Managed domain ---------------------------------------------------------------------------

    def _domain(self, config: StackConfig) -> None:
        prod = config.is_prod
        self.domain = opensearch.Domain(
            self,
            "Domain",
            version=opensearch.EngineVersion.OPENSEARCH_2_19,
            capacity=opensearch.CapacityConfig(
                data_nodes=2 if prod else 1,
                data_node_instance_type="r7g.large.search" if prod else "t3.small.search",
                master_nodes=3 if prod else None,
                master_node_instance_type="m7g.large.search" if prod else None,
                multi_az_with_standby_enabled=False,
            ),
            zone_awareness=opensearch.ZoneAwarenessConfig(enabled=prod, availability_zone_count=2)
            if prod
            else None,
            ebs=opensearch.EbsOptions(volume_size=20, volume_type=ec2.EbsDeviceVolumeType.GP3),
            encryption_at_rest=opensearch.EncryptionAtRestOptions(enabled=True),
            node_to_node_encryption=True,
            enforce_https=True,
            tls_security_policy=opensearch.TLSSecurityPolicy.TLS_1_2,
            logging=opensearch.LoggingOptions(
                slow_search_log_enabled=True, slow_index_log_enabled=True, app_log_enabled=True
            ),
            removal_policy=SEARCH_REMOVAL,  # derived data, as the collection's
        )
        self.endpoint = f"https://{self.domain.domain_endpoint}"
        self._resource_arn = self.domain.domain_arn
        if self.operators:
            # The domain's access policy (installed after the domain by CDK's custom resource):
            # the operators reach the index's paths without an IAM policy of their own.
            self.domain.add_access_policies(
                iam.PolicyStatement(
                    principals=[iam.ArnPrincipal(arn) for arn in self.operators],
                    actions=OPERATOR_DOMAIN_ACTIONS,
                    resources=[
                        f"{self._resource_arn}/{self.index_name}",
                        f"{self._resource_arn}/{self.index_name}/*",
                    ],
                )
            )
        acknowledge(
            self.domain,
            "AwsSolutions-OS1",
            "Outside a VPC on purpose: the functions run outside a VPC (no NAT gateway to pay for); "
            "every request is SigV4-signed and authorised by IAM, over HTTPS only.",
        )
        acknowledge(
            self.domain,
            "AwsSolutions-OS3",
            "Access is by IAM identity (SigV4), not by source IP: Lambda has no fixed addresses.",
        )
        acknowledge(
            self.domain,
            "AwsSolutions-OS5",
            "No anonymous access: the domain's resource policy, when there is one, names only the "
            "operators of searchAdminPrincipals, so only those and the IAM principals of this "
            "account granted es:ESHttp* on it can call it.",
        )
        acknowledge(
            self.domain,
            "AwsSolutions-IAM5[Resource::*]",
            "CDK's log-publishing setup for the domain calls logs:PutResourcePolicy, which has no "
            "resource-level permissions.",
        )
        # CDK's shared AwsCustomResource function that installs that log resource policy.
        installer = Stack.of(self).node.try_find_child(AWS_CUSTOM_RESOURCE_ID)
        if installer is not None:
            acknowledge(
                installer,
                "AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole]",
                "CDK's own one-shot function (AwsCustomResource) that installs the domain's log "
                "resource policy at deploy time; its role is made by CDK, with the managed policy.",
            )
        if not prod:
            acknowledge(
                self.domain,
                "AwsSolutions-OS4",
                "dev: one data node, no dedicated masters, to keep a test stage cheap; prod has 3.",
            )
            acknowledge(
                self.domain,
                "AwsSolutions-OS7",
                "dev: a single node in one zone, to keep a test stage cheap; prod spans two zones.",
            )

    # Grants -----------------------------------------------------------------------------------

    def grant_read(self, role: iam.IRole) -> None:
        # On a domain, IAM sees HTTP verbs and paths: searching needs POST on the index, which
        # IAM cannot tell from a document write; the serverless data policy can.
        self._grant(role, "read", ["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPost"])

    def grant_write(self, role: iam.IRole) -> None:
        self._grant(role, "write", ["es:ESHttpGet", "es:ESHttpPost", "es:ESHttpPut", "es:ESHttpDelete"])

    def grant_admin(self, role: iam.IRole) -> None:
        self._grant(role, "admin", ["es:ESHttpGet", "es:ESHttpHead", "es:ESHttpPut"])

    def _grant(self, role: iam.IRole, group: str, domain_actions: list[str]) -> None:
        if self.service == "aoss":
            # IAM lets the role reach the collection; the data-access policy says what it may do.
            if self.access_policy is not None:
                raise RuntimeError("search access granted after seal(): grant before sealing")
            self._roles[group].append(role)
            role.add_to_principal_policy(
                iam.PolicyStatement(actions=["aoss:APIAccessAll"], resources=[self._resource_arn])
            )
            return
        domain = Stack.of(self).get_logical_id(self.domain.node.default_child)
        acknowledge(
            role,
            f"AwsSolutions-IAM5[Resource::<{domain}.Arn>/{self.index_name}/*]",
            "The documents of the one index (index/_doc/<id>, index/_search): OpenSearch HTTP paths "
            "under the index this stack owns, nothing else of the domain.",
        )
        # The adapter names the index in every path (`/<index>/_bulk`, `/<index>/_msearch`):
        # nothing at the domain's root (tests/infra/test_opensearch_grants.py replays each request).
        paths = [self.index_name, f"{self.index_name}/*"]
        role.add_to_principal_policy(
            iam.PolicyStatement(
                actions=domain_actions, resources=[f"{self._resource_arn}/{path}" for path in paths]
            )
        )
