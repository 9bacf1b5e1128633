"""Parses a /metrics scrape (stdin) with the Prometheus project's own Python parsers (PyPI
`prometheus-client`). The scrape is OpenMetrics 1.0 text (what the Rust `prometheus-client`
writes, and what Prometheus asks for first): the OpenMetrics parser reads it strictly (it
raises on a missing `# EOF`, a counter sample without `_total`, a histogram without `+Inf`),
and the classic Prometheus text parser must read the same samples from it too. Prints the
samples as JSON, one object per sample: {"family", "type", "name", "labels", "value"}
(cli/tests/serve_ops.rs reads them)."""

import json
import math
import sys

from prometheus_client.openmetrics.parser import text_string_to_metric_families
from prometheus_client.parser import (
    text_string_to_metric_families as classic_families,
)

text = sys.stdin.read()
samples = []
for family in text_string_to_metric_families(text):
    for s in family.samples:
        value = None if math.isnan(s.value) else s.value
        samples.append(
            {
                "family": family.name,
                "type": family.type,
                "name": s.name,
                "labels": s.labels,
                "value": value,
            }
        )
classic = sum(len(f.samples) for f in classic_families(text))
if classic != len(samples):
    sys.exit(f"the parsers disagree: {len(samples)} OpenMetrics samples, {classic} classic ones")
json.dump(samples, sys.stdout)
