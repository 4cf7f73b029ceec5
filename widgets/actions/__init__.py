"""The window's actions as data: :mod:`widgets.actions.registry` declares and places them."""
