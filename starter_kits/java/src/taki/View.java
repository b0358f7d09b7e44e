package taki;

import java.util.List;
import java.util.Map;

/**
 * What the bot's seat sees (PROTOCOL.md section 7). {@code stages} and {@code openRun} are
 * null when they do not apply; {@code events} are left as plain maps (section 8).
 */
public record View(
        int seat,
        int players,
        List<String> hand,
        List<Integer> handSizes,
        List<Boolean> active,
        List<Integer> stages,
        String leadingCard,
        String topCard,
        String color,
        int direction,
        int turn,
        String phase,
        int pendingDraw,
        String openRun,
        int drawPile,
        int discardPile,
        boolean declaredLastCard,
        int actionCount,
        List<Map<String, Object>> events) {}
