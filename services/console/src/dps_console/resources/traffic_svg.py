"""The traffic chart's bars and hourly rows as markup, written here rather than in the template: a
week is 168 bars and 168 rows, and a Jinja loop over them took most of the endpoint page's render time
(about 7 ms each, unloaded). Every text is escaped."""

from __future__ import annotations

from markupsafe import Markup, escape

from dps_console.domain.traffic import Chart, Hour


def bars(chart: Chart) -> Markup:
    """One ``<g>`` per hour with attempts: its tooltip, the succeeded bar, the failed bar on top."""
    parts = []
    for b in chart.bars:
        if not (b.succeeded_height or b.failed_height):
            continue
        ok = (f'<rect class="ok" x="{b.x}" y="{b.succeeded_y}" width="{b.width}" height="{b.succeeded_height}"></rect>'
              if b.succeeded_height else "")
        bad = (f'<rect class="bad" x="{b.x}" y="{b.failed_y}" width="{b.width}" height="{b.failed_height}"></rect>'
               if b.failed_height else "")
        parts.append(f"<g><title>{escape(b.label)}</title>{ok}{bad}</g>")
    return Markup("\n".join(parts))


def hourly_rows(hours: list[Hour]) -> Markup:
    """The table's rows: the hour (UTC), succeeded, failed."""
    return Markup("\n".join(f'<tr><th scope="row">{h.start:%Y-%m-%d %H}:00</th><td>{h.succeeded}</td><td>{h.failed}</td></tr>'
                            for h in hours))
