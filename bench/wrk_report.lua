-- Prints one machine-readable line after a wrk run: requests/s, latency percentiles (ms), errors.
-- bench/run.py parses the line that starts with BENCH_RESULT.
done = function(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    'BENCH_RESULT {"requests": %d, "seconds": %.3f, "rps": %.1f, "p50_ms": %.3f, "p90_ms": %.3f, ' ..
    '"p99_ms": %.3f, "max_ms": %.3f, "errors": {"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}}\n',
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000, latency:percentile(99) / 1000,
    latency.max / 1000, e.connect, e.read, e.write, e.status, e.timeout))
end
