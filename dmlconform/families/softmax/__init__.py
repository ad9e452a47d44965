"""softmax"""
