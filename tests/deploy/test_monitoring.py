"""deploy/monitoring: the Prometheus alert rules and the Grafana dashboard, checked against the code.

Every expression is parsed by promql-parser (a port of Prometheus' own PromQL parser: syntax,
functions and argument types, so ``rate(x)`` without a range is an error as in Prometheus). Every
metric it selects must be one the services export: found in their source as a prometheus_client
Counter, Gauge, Histogram or Summary (with the series names each type exposes: ``_total``, ``_bucket``,
...). Every label it matches or groups by must be one of that metric's labels or one the scrape adds;
every value it matches with ``=`` must be a string the code writes (a typo such as ``exhausted`` for
``EXHAUSTED`` would select nothing, and the alert would never fire).
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import promql_parser
import pytest
import yaml
from deploy_helpers import ROOT

MONITORING = ROOT / "deploy" / "monitoring"
SOURCES = [ROOT / "libs" / "common" / "src", *sorted((ROOT / "services").glob("*/src"))]
# added by the scrape (the annotation-based kubernetes-pods job), not by the services
TARGET_LABELS = {"job", "instance", "namespace", "pod"}
# Grafana's variables, as Grafana substitutes them before the query reaches Prometheus
GRAFANA_VARIABLES = {"$__rate_interval": "5m", "$__interval": "1m", "$namespace": "dps"}
METRIC_TYPES = {"Counter", "Gauge", "Histogram", "Summary"}


@dataclass(frozen=True)
class Metric:
    kind: str
    labels: frozenset[str]


def _metric_definitions(path: Path) -> dict[str, Metric]:
    tree = ast.parse(path.read_text())
    aliases = {alias.asname or alias.name: alias.name for node in ast.walk(tree)
               if isinstance(node, ast.ImportFrom) and node.module == "prometheus_client"
               for alias in node.names if alias.name in METRIC_TYPES}
    found = {}
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in aliases):
            continue
        if not (node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            continue
        labels_node = node.args[2] if len(node.args) > 2 else next(
            (k.value for k in node.keywords if k.arg == "labelnames"), None)
        labels = frozenset(e.value for e in labels_node.elts) if isinstance(labels_node, ast.List | ast.Tuple) else frozenset()
        found[node.args[0].value] = Metric(aliases[node.func.id], labels)
    return found


def _scrape_gauges(path: Path) -> dict[str, Metric]:
    """The gauges a module reads at scrape time (``dps_common.runtime_metrics.ScrapeGauges``): its
    module-level ``dps_*`` name constants, with the label names of its ``ScrapeGauges(...)`` calls."""
    text = path.read_text()
    if "ScrapeGauges(" not in text or "class ScrapeGauges" in text:
        return {}
    tree = ast.parse(text)
    labels: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "ScrapeGauges":
            if len(node.args) > 1 and isinstance(node.args[1], ast.Dict):
                labels |= {key.value for key in node.args[1].keys if isinstance(key, ast.Constant)}
    return {node.value.value: Metric("Gauge", frozenset(labels)) for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str) and node.value.value.startswith("dps_")}


def exported_series() -> dict[str, frozenset[str]]:
    """Every series name the services' code exports -> the labels it carries (a gauge of a
    multiprocess ``liveall`` mode also carries ``pid``, added by prometheus-client)."""
    series: dict[str, frozenset[str]] = {}
    for source in SOURCES:
        for path in source.rglob("*.py"):
            for name, metric in {**_metric_definitions(path), **_scrape_gauges(path)}.items():
                base = name.removesuffix("_total") if metric.kind == "Counter" else name
                if metric.kind == "Counter":
                    series[base + "_total"] = series[base + "_created"] = metric.labels
                elif metric.kind == "Gauge":
                    series[name] = metric.labels
                else:
                    for suffix in ("_count", "_sum", "_created"):
                        series[name + suffix] = metric.labels
                    if metric.kind == "Histogram":
                        series[name + "_bucket"] = metric.labels | {"le"}
                    else:
                        series[name] = metric.labels | {"quantile"}
    return series


def string_literals() -> set[str]:
    return {node.value for source in SOURCES for path in source.rglob("*.py")
            for node in ast.walk(ast.parse(path.read_text())) if isinstance(node, ast.Constant)
            and isinstance(node.value, str)}


def problems(expr: str, series: dict[str, frozenset[str]], literals: set[str]) -> list[str]:
    """What is wrong with one expression (it must parse: a syntax or type error raises)."""
    found: list[str] = []
    tree = promql_parser.parse(expr)
    selectors: list[Any] = []

    def visit(node: Any) -> bool:
        if isinstance(node, promql_parser.VectorSelector):
            selectors.append(node)
        elif isinstance(node, promql_parser.AggregateExpr) and node.modifier is not None:
            inner: list[str] = []
            promql_parser.walk(node.expr, lambda n: inner.append(n.name)
                               if isinstance(n, promql_parser.VectorSelector) else None)
            known = TARGET_LABELS.union(*(series.get(name, frozenset()) for name in inner))
            found.extend(f"grouping by {label!r}, which none of {inner} has"
                         for label in node.modifier.labels if label not in known)
        return True

    promql_parser.walk(tree, visit)
    assert selectors, f"no metric selected: {expr}"
    for selector in selectors:
        if selector.name not in series:
            found.append(f"{selector.name!r} is not a metric the services export")
            continue
        for matcher in selector.matchers.matchers:
            if matcher.name not in series[selector.name] | TARGET_LABELS:
                found.append(f"{selector.name} has no label {matcher.name!r}")
            elif matcher.op == promql_parser.MatchOp.Equal and matcher.name not in TARGET_LABELS \
                    and matcher.value not in literals:
                found.append(f"{selector.name}{{{matcher.name}={matcher.value!r}}}: the code never writes that value")
    return found


def alert_rules() -> list[dict[str, Any]]:
    document = yaml.safe_load((MONITORING / "alerts.yaml").read_text())
    return [rule for group in document["groups"] for rule in group["rules"]]


def dashboard() -> dict[str, Any]:
    return json.loads((MONITORING / "dashboard.json").read_text())


def dashboard_exprs() -> list[str]:
    exprs = []
    for panel in dashboard()["panels"]:
        for target in panel.get("targets", []):
            expr = target["expr"]
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            exprs.append(expr)
    return exprs


@pytest.fixture(scope="module")
def code() -> tuple[dict[str, frozenset[str]], set[str]]:
    return exported_series(), string_literals()


def test_the_code_exports_the_metrics_the_alerts_are_about(code):
    series, _ = code
    for name in ("dps_http_requests_total", "dps_relay_publish_delay_seconds_bucket", "dps_webhooks_attempts_total",
                 "dps_rate_limit_store_errors_total", "dps_rate_limit_decisions_total"):
        assert name in series
    assert series["dps_http_requests_total"] == {"service", "method", "route", "status"}
    assert "le" in series["dps_http_request_duration_seconds_bucket"]


def test_the_alert_rules_are_well_formed():
    rules = alert_rules()
    names = [rule["alert"] for rule in rules]
    assert len(names) == len(set(names))
    for rule in rules:
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations", "keep_firing_for"}
        assert rule["labels"]["severity"] in {"warning", "critical"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        if "for" in rule:
            promql_parser.parse_duration(rule["for"])


def test_the_alerts_cover_outbox_lag_exhausted_deliveries_5xx_and_the_rate_limit_store():
    by_metric = {name: [rule["alert"] for rule in alert_rules() if name in rule["expr"]]
                 for name in ("dps_relay_publish_delay_seconds_bucket", 'dps_webhooks_attempts_total{status="EXHAUSTED"}',
                              'dps_http_requests_total{status=~"5.."}', "dps_rate_limit_store_errors_total")}
    assert all(by_metric.values()), by_metric


@pytest.mark.parametrize("rule", alert_rules(), ids=lambda rule: rule["alert"])
def test_every_alert_expression_parses_and_uses_only_exported_metrics(rule, code):
    assert not problems(rule["expr"], *code)


def test_the_dashboard_is_a_grafana_dashboard():
    board = dashboard()
    assert board["uid"] and board["title"] and isinstance(board["schemaVersion"], int)
    ids = [panel["id"] for panel in board["panels"]]
    assert len(ids) == len(set(ids))
    for panel in board["panels"]:
        assert {"x", "y", "w", "h"} <= set(panel["gridPos"]) and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        if panel["type"] != "row":
            assert panel["targets"] and panel["datasource"]["uid"] == "${datasource}"
    for variable in board["templating"]["list"]:
        if variable["type"] == "query":
            (metric,) = re.findall(r"label_values\((\w+),", variable["definition"])
            assert metric in exported_series()


@pytest.mark.parametrize("expr", dashboard_exprs())
def test_every_dashboard_query_parses_and_uses_only_exported_metrics(expr, code):
    assert not problems(expr, *code)


def test_the_dashboard_shows_every_metric_an_alert_uses():
    selected: set[str] = set()
    for expr in [rule["expr"] for rule in alert_rules()]:
        promql_parser.walk(promql_parser.parse(expr), lambda n: selected.add(n.name)
                           if isinstance(n, promql_parser.VectorSelector) else None)
    shown = "\n".join(dashboard_exprs())
    assert selected and not [name for name in selected if name not in shown]


@pytest.mark.parametrize(("expr", "complaint"), [
    ("rate(dps_http_requests_total)", "expected type matrix"),
    ("sum(rate(dps_http_requests_total[5m])", "unclosed"),
    ("rate(dps_http_requets_total[5m])", "not a metric the services export"),
    ('rate(dps_webhooks_attempts_total{status="exhausted"}[5m])', "never writes that value"),
    ('rate(dps_http_requests_total{code="500"}[5m])', "has no label 'code'"),
    ("sum by (tenant) (rate(dps_http_requests_total[5m]))", "grouping by 'tenant'"),
])
def test_the_checker_rejects_what_prometheus_would_not_find(expr, complaint, code):
    try:
        found = problems(expr, *code)
    except ValueError as exc:
        found = [str(exc)]
    assert any(complaint in problem for problem in found), found
