INSERT INTO p (tid, note) VALUES (1, 'first'), (2, 'second');
INSERT INTO p (id, tid, note) VALUES (1000, 3, 'jump');
INSERT INTO p (tid, note) VALUES (4, 'after');
SELECT LAST_INSERT_ID();
SELECT * FROM p ORDER BY id DESC LIMIT 3;
