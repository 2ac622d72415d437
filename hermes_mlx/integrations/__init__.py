"""Integrations: how Hermes (and any OpenAI-style client) reaches our summarizer.

In process through the `mlx` provider plugin (provider.py, registered by plugin.py), or over
loopback HTTP (server.py); both speak the OpenAI chat-completions shapes (openai_shapes.py). One
pipeline: the entry point recognises the request once (hermes_prompts.recognise), picks the model
(model_names.py), and hands both to the adapter (adapter.py), which runs the summarizer for a
compaction prompt and passthrough.py for anything else. Hermes's config: hermes_config.py (the
file), hermes_settings.py (what a request needs), hermes_checks.py (what will break),
hermes_setup.py (write, check, prove). context_engine.py is the opt-in second way in.
Nothing here is imported by the lower layers.
"""
