INSERT INTO t (id, i, s, d, dt) VALUES (100, 100, 'hundred', 1.25, '2020-01-01 10:00:00');
INSERT INTO t (id, i) VALUES (100, 5) ON DUPLICATE KEY UPDATE i = i + 1;
INSERT IGNORE INTO t (id, i) VALUES (100, 7), (101, 1);
REPLACE INTO t (id, i, s) VALUES (101, 1010, 'replaced');
SELECT id, i, s FROM t WHERE id >= 100;
