"""Assets of the code location, one concern per module."""
