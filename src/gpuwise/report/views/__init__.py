"""One view per command: its model -> a format-neutral Document (report/document.py).

Views only arrange and format (with gpuwise.units); they never load, judge or print.
"""
