"""cdk-nag acknowledgements: one call per finding, its reason written next to it."""

from __future__ import annotations

from aws_cdk import Acknowledgment, Validations
from constructs import IConstruct


def acknowledge(scope: IConstruct, rule: str, reason: str) -> None:
    """Accept one cdk-nag finding (`AwsSolutions-IAM5[Resource::*]`) on scope and its children."""
    if not reason.strip():
        raise ValueError(f"{rule}: every acknowledgement needs its reason")
    Validations.of(scope).acknowledge(Acknowledgment(id=rule, reason=reason))
