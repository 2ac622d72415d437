"""Integrations: how Hermes (and any OpenAI-style client) reaches our summarizer.

In process through the `mlx` provider plugin (provider.py), or over loopback HTTP (server.py);
both speak the OpenAI chat-completions shapes (openai_shapes.py) and run the prompt adapter
(adapter.py). Nothing here is imported by the lower layers.
"""
