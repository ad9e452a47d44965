"""onnxruntime"""
