"""A tool button for an on/off option that only applies in some states (text search's Aa, ab and .*)."""

from __future__ import annotations

from PySide6.QtGui import QPaintEvent
from PySide6.QtWidgets import QStyle, QStyleOptionToolButton, QStylePainter, QToolButton


class OptionToggle(QToolButton):
    """Drawn switched off while disabled: a disabled, checked button looked pressed, as if `.*` were on in a mode
    that reads no regular expression (issue 32 item 9). The choice itself is kept and shows again once the
    option applies."""

    def paintEvent(self, event: QPaintEvent) -> None:  # noqa: N802 (Qt override)
        if self.isEnabled() or not self.isChecked():
            super().paintEvent(event)
            return
        option = QStyleOptionToolButton()
        self.initStyleOption(option)
        option.state &= ~(QStyle.StateFlag.State_On | QStyle.StateFlag.State_Sunken)
        option.state |= QStyle.StateFlag.State_Raised  # as QToolButton marks a button neither checked nor down
        QStylePainter(self).drawComplexControl(QStyle.ComplexControl.CC_ToolButton, option)
