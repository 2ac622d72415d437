"""Compactor layer: when and what to fold (micro and batch passes, markers, telemetry), replays and the store."""
