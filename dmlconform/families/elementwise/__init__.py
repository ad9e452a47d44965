"""elementwise"""
