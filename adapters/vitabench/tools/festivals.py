"""The small festival calendar behind ``get_holiday_date`` (one table per language).

Both tables hold the same festivals in the same order; only the names differ.
"""

from __future__ import annotations

FESTIVALS_EN: dict[str, dict[str, str]] = {
    "2025": {
        "New Year's Day": "2025-01-01",
        "Start of Autumn": "2025-08-07",
        "Women's Day": "2025-03-08",
        "Laba Festival": "2025-01-07",
        "Dragon Head Festival": "2025-03-01",
        "Party Founding Day": "2025-07-01",
        "Qingming Festival": "2025-04-04",
        "Double Ninth Festival": "2025-10-29",
        "Dragon Boat Festival": "2025-05-31",
        "Mother's Day": "2025-05-11",
        "Lantern Festival": "2025-02-15",
        "Labor Day": "2025-05-01",
        "Qixi Festival": "2025-08-29",
        "Winter Solstice": "2025-12-21",
        "Christmas Day": "2025-12-25",
        "National Day": "2025-10-01",
        "Mid-Autumn Festival": "2025-10-06",
    },
    "2024": {
        "Double Ninth Festival": "2024-10-11",
        "Qixi Festival": "2024-08-10",
        "Valentine's Day": "2024-02-14",
        "Qingming Festival": "2024-04-04",
        "Dragon Boat Festival": "2024-06-10",
        "Lantern Festival": "2024-02-24",
        "Mid-Autumn Festival": "2024-09-17",
    },
    "2023": {
        "National Day": "2023-10-01",
        "Dragon Boat Festival": "2023-06-22",
        "Mid-Autumn Festival": "2023-09-29",
        "Qingming Festival": "2023-04-05",
        "Double Ninth Festival": "2023-10-23",
        "Father's Day": "2023-06-18",
    },
}

_ZH_NAMES = {
    "New Year's Day": "元旦节",
    "Start of Autumn": "立秋",
    "Women's Day": "妇女节",
    "Laba Festival": "腊八节",
    "Dragon Head Festival": "龙头节",
    "Party Founding Day": "建党节",
    "Qingming Festival": "清明节",
    "Double Ninth Festival": "重阳节",
    "Dragon Boat Festival": "端午节",
    "Mother's Day": "母亲节",
    "Lantern Festival": "元宵节",
    "Labor Day": "劳动节",
    "Qixi Festival": "七夕节",
    "Winter Solstice": "冬至",
    "Christmas Day": "圣诞节",
    "National Day": "国庆节",
    "Mid-Autumn Festival": "中秋节",
    "Valentine's Day": "情人节",
    "Father's Day": "父亲节",
}

FESTIVALS_ZH: dict[str, dict[str, str]] = {
    year: {_ZH_NAMES[name]: date for name, date in table.items()}
    for year, table in FESTIVALS_EN.items()
}


def festival_table(language: str) -> dict[str, dict[str, str]]:
    return FESTIVALS_ZH if language == "zh" else FESTIVALS_EN
