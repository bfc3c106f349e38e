"""The command line: thin click commands, one module per command group, over the library.

May import: anything. Nothing else imports this package (click stays out of the library).
"""
