"""The tool's own name and version: the one place the version is written (setup.cfg reads
it, generator.__version__ re-exports it, `init` pins it, synth records it beside the output)."""
NAME = "gke-ml-platform"
VERSION = "0.1.0"
