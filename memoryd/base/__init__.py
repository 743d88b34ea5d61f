"""The base layer: text, files, secrets and similarity that every other package builds on."""
