"""Backends: the protocol, the registry and the implementations under test."""
