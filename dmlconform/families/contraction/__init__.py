"""contraction"""
