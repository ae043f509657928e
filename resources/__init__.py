"""Data files shipped with Quarry; desktop_app.assets.resource_path finds them."""
