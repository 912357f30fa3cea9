"""Inference serving plans (`kind: inference` workloads): traffic, capacity per GPU, options, decision."""
