"""value_scale"""
