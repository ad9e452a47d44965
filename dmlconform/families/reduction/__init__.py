"""reduction"""
