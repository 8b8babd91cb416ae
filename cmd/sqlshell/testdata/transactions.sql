CREATE TABLE acct (id INT PRIMARY KEY, balance INT NOT NULL);
INSERT INTO acct VALUES (1, 100), (2, 0);
START TRANSACTION;
UPDATE acct SET balance = balance - 30 WHERE id = 1;
UPDATE acct SET balance = balance + 30 WHERE id = 2;
COMMIT;
BEGIN;
DELETE FROM acct WHERE id > 0;
SELECT COUNT(*) AS inside FROM acct;
ROLLBACK;
SELECT * FROM acct ORDER BY id;
DELIMITER //
CREATE PROCEDURE total() BEGIN SELECT SUM(balance) AS total FROM acct; END//
DELIMITER ;
CALL total();
