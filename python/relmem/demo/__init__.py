"""The demo collection and the main demo job."""
