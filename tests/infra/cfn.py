"""Reading a synthesized CloudFormation template: resources, functions, policies, API paths."""

from __future__ import annotations

import json
from typing import Any

Template = dict[str, Any]

HANDLER_PREFIX = "functions."
HANDLER_SUFFIX = ".handler.lambda_handler"


def resources(template: Template, kind: str) -> dict[str, dict[str, Any]]:
    return {name: body for name, body in template["Resources"].items() if body["Type"] == kind}


def props(template: Template, logical_id: str) -> dict[str, Any]:
    return dict(template["Resources"][logical_id].get("Properties", {}))


def render(value: Any) -> Any:
    """Intrinsics as readable text: Ref → <Id>, GetAtt → <Id.Attr>, Join → the joined string."""
    if isinstance(value, dict) and len(value) == 1:
        ((key, arg),) = value.items()
        if key == "Ref":
            return f"<{arg}>"
        if key == "Fn::GetAtt":
            return f"<{arg[0]}.{arg[1]}>"
        if key == "Fn::Join":
            separator, parts = arg
            return separator.join(str(render(part)) for part in parts)
    if isinstance(value, dict):
        return {key: render(item) for key, item in value.items()}
    if isinstance(value, list):
        return [render(item) for item in value]
    return value


def functions_by_folder(template: Template) -> dict[str, str]:
    """functions/<folder> → logical id of the Lambda function running its handler."""
    found: dict[str, str] = {}
    for name, body in resources(template, "AWS::Lambda::Function").items():
        handler = body["Properties"].get("Handler", "")
        if handler.startswith(HANDLER_PREFIX) and handler.endswith(HANDLER_SUFFIX):
            found[handler[len(HANDLER_PREFIX) : -len(HANDLER_SUFFIX)]] = name
    return found


def environment(template: Template, function_id: str) -> dict[str, Any]:
    return dict(props(template, function_id).get("Environment", {}).get("Variables", {}))


def role_of(template: Template, function_id: str) -> str:
    role = props(template, function_id)["Role"]
    return str(role["Fn::GetAtt"][0])


def statements(template: Template, role_id: str) -> list[dict[str, Any]]:
    """Every statement of every inline policy attached to the role, rendered."""
    found: list[dict[str, Any]] = []
    for body in resources(template, "AWS::IAM::Policy").values():
        attached = [render(role) for role in body["Properties"].get("Roles", [])]
        if f"<{role_id}>" in attached:
            found.extend(render(body["Properties"]["PolicyDocument"]["Statement"]))
    return found


def actions(statement: dict[str, Any]) -> list[str]:
    action = statement["Action"]
    return [action] if isinstance(action, str) else list(action)


def listed(value: Any) -> list[Any]:
    return value if isinstance(value, list) else [value]


def allowed_actions(template: Template, function_id: str) -> set[str]:
    return {a for s in statements(template, role_of(template, function_id)) for a in actions(s)}


def method_paths(template: Template) -> dict[tuple[str, str], dict[str, Any]]:
    """(HTTP method, path) → the API Gateway method's properties."""
    parts = {
        name: (body["Properties"]["PathPart"], body["Properties"]["ParentId"])
        for name, body in resources(template, "AWS::ApiGateway::Resource").items()
    }

    def path_of(resource_id: str) -> str:
        segments: list[str] = []
        while resource_id in parts:
            part, parent = parts[resource_id]
            segments.append(part)
            parent_ref = parent.get("Ref") if isinstance(parent, dict) else None
            resource_id = parent_ref or ""
        return "/" + "/".join(reversed(segments))

    found: dict[tuple[str, str], dict[str, Any]] = {}
    for body in resources(template, "AWS::ApiGateway::Method").values():
        method = body["Properties"]
        resource = method["ResourceId"]
        path = path_of(resource["Ref"]) if "Ref" in resource else "/"
        found[(method["HttpMethod"], path)] = method
    return found


def integrated_function(method: dict[str, Any]) -> str:
    """Logical id of the Lambda function behind a proxy integration."""
    uri = json.dumps(method["Integration"]["Uri"])
    marker = '"Fn::GetAtt": ["'
    start = uri.index(marker) + len(marker)
    return uri[start : uri.index('"', start)]


def outputs(template: Template) -> dict[str, Any]:
    return {name: render(body["Value"]) for name, body in template.get("Outputs", {}).items()}
